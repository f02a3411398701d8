/**
 * Lazy decoding of Kubernetes objects (the `lazyDecode` transport option).
 *
 * `JSON.parse` builds every value of an object: for a typical pod that is
 * ~100 heap objects, ~70 % of an informer's CPU per watch event, and the bulk
 * of what the garbage collector has to trace in a large cache. Most event
 * handlers read only `metadata` (to enqueue a key); `spec` and `status` are
 * read later, for the few objects that get reconciled.
 *
 * A lazy object is a plain object (`Object.prototype`, own enumerable keys in
 * the server's order) whose `apiVersion`, `kind` and `metadata` (but for
 * `metadata.managedFields`) are parsed at once. Every other member is an own
 * enumerable accessor that parses its own text on first read and
 * then replaces itself with a plain data property; assigning to it does the
 * same. So `JSON.stringify`, spreading, `structuredClone`, `Object.keys` and
 * deep equality see the whole object.
 *
 * The scan reads the UTF-8 bytes of the watch line or the list page; a line
 * is never decoded whole. What is decoded is the metadata (to be parsed) and
 * each lazy member's own text, a string of its own held until the member is
 * read. So a cached object keeps ~4 KB of text for a ~4.8 KB pod (the
 * metadata is not held twice, as parsed values and as text), and never its
 * line or page. In a large cache, where most objects outlive the young
 * generation, what an object holds is what the garbage collector copies.
 *
 * The scan checks the whole JSON syntax up front, every member it keeps
 * included (brackets, strings and their escapes, numbers, literals), so a line
 * is rejected at arrival exactly when `JSON.parse` would reject it, and reading
 * a member later can never throw; it refuses nesting past `MAX_DEPTH`, as Go
 * does. An object a `KeepObject` drops is followed for its structure only
 * (docs/transport.md, "Hostile answers"). Positions in errors count bytes.
 */

import { hasUnreadProtobufMembers, protobufWithMetadata } from './protobuf/lazy.ts';
import { QUOTE, OPEN_BRACE, fail, skipSpace, stringEnd, valueEnd, text, keyAt, valueAt, keyIs, members } from './jsonScanner.ts';
import { lazyAccessors } from '../util/lazyAccessors.ts';
import { Stamp, privateSlot } from '../util/privateSlot.ts';

/** A lazy object's unparsed members: per key, its JSON text. */
interface Source {
  readonly texts: Map<string, string>;
  /** Values read from a frozen object, which cannot take them as data properties. */
  frozen?: Map<string, unknown>;
}

/**
 * Each lazy object's source, in a private field of the object itself (cleared once every member is parsed), not in a
 * `WeakMap`: as invisible to its keys, spreading, `structuredClone` and deep equality, with no ephemeron to trace.
 */
const sources = privateSlot<Source>();

/** Reads a lazy member: parses its text, keeps the value as a data property. */
function materialize(target: object, key: string): unknown {
  const source = sources.get(target);
  if (source?.frozen?.has(key)) return source.frozen.get(key);
  const json = source?.texts.get(key);
  // Only an object that did not get the accessor from us reads it without a text: a copy of the accessors.
  if (json === undefined)
    throw new TypeError(
      `member "${key}" of a lazily decoded object read on a copy of its property descriptors, which does not hold its text: ` +
        'copy the object by spreading, structuredClone or JSON instead',
    );
  const value: unknown = JSON.parse(json);
  settle(target, key, value, source);
  return value;
}

function settle(target: object, key: string, value: unknown, source: Source | undefined): void {
  if (!Reflect.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })) {
    // A frozen object keeps its accessors: keep what they read (one identity per member).
    if (source) (source.frozen ??= new Map()).set(key, value);
    return;
  }
  if (source && source.texts.delete(key) && source.texts.size === 0) sources.clear(target);
}

/** One accessor pair per member name, shared by every lazy object. */
const accessorFor = lazyAccessors(materialize, (target, key, value) => settle(target, key, value, sources.get(target)));

function defineLazy(target: Record<string, unknown>, key: string, json: string, source: Source): void {
  // A repeated key: the last one wins, as with JSON.parse.
  source.texts.set(key, json);
  Object.defineProperty(target, key, accessorFor(key));
}

export function defineEager(target: Record<string, unknown>, key: string, value: unknown, source: Source | undefined): void {
  source?.texts.delete(key);
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Members shorter than this are parsed at once (a lazy member costs about that much). */
const EAGER_BYTES = 24;

/** Parses the metadata object at `i` (held by `outer` containers), all but `managedFields`, which stays lazy. */
function metadataAt(b: Buffer, i: number, outer: number): { value: Record<string, unknown>; end: number } {
  let cutStart = -1;
  let cutEnd = -1;
  const end = members(b, i, outer, (keyStart, keyEnd, start) => {
    if (!keyIs(b, keyStart, keyEnd, 'managedFields')) return -1;
    cutStart = start;
    cutEnd = valueEnd(b, start, outer + 1);
    return cutEnd;
  });
  if (cutStart < 0) return { value: JSON.parse(text(b, i, end)) as Record<string, unknown>, end };
  // Parse the metadata text with managedFields' value replaced by null, then
  // make that member lazy in place (so the key keeps its position).
  const value = JSON.parse(`${text(b, i, cutStart)}null${text(b, cutEnd, end)}`) as Record<string, unknown>;
  if (cutEnd - cutStart >= EAGER_BYTES) {
    const source: Source = { texts: new Map() };
    defineLazy(value, 'managedFields', text(b, cutStart, cutEnd), source);
    sources.stamp(value, source);
  } else value.managedFields = JSON.parse(text(b, cutStart, cutEnd));
  return { value, end };
}

/**
 * The members of the metadata object at `i` (held by `outer` containers) that say which object it is, the last of
 * each name as JSON.parse keeps it (one whose last value is not a string is left out); the others are skipped
 * unparsed (their structure followed: a kept object's metadata is then parsed whole).
 */
function identityAt(b: Buffer, i: number, outer: number): { value: Record<string, unknown>; end: number } {
  const value: Record<string, unknown> = {};
  const end = members(b, i, outer, (keyStart, keyEnd, start) => {
    const wanted =
      keyIs(b, keyStart, keyEnd, 'name') || keyIs(b, keyStart, keyEnd, 'namespace') || keyIs(b, keyStart, keyEnd, 'resourceVersion');
    if (!wanted) return -1;
    if (b[start] !== QUOTE) {
      delete value[keyAt(b, keyStart, keyEnd)];
      return -1;
    }
    const stop = stringEnd(b, start);
    value[keyAt(b, keyStart, keyEnd)] = keyAt(b, start, stop);
    return stop;
  });
  return { value, end };
}

/** The identity {@link identityAt} reads, from a parsed metadata: its name, namespace and resourceVersion that are strings. */
function identityOf(metadata: Record<string, unknown>): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  for (const key of ['name', 'namespace', 'resourceVersion']) if (typeof metadata[key] === 'string') value[key] = metadata[key];
  return value;
}

/**
 * The object whose `{` is at `i` of `b` (held by `outer` containers: the line's, the list's), decoded lazily, and
 * the index after it. `apiVersion`, `kind`, `metadata` and short members are parsed at once; the
 * others keep a decoded copy of their text (`b` may be reused afterwards).
 */
export function lazyObjectAt(b: Buffer, i: number, keep?: KeepObject, outer = 0): { value: Record<string, unknown>; end: number } {
  const target: Record<string, unknown> = {};
  let source: Source | undefined;
  let skeleton: { metadata: Record<string, unknown> } | undefined;
  let metadatas = 0;
  const inner = outer + 1;
  const end = members(b, i, outer, (keyStart, keyEnd, start) => {
    // Dropped: the rest is followed for its structure only (docs/transport.md, "Lazy decoding"), nothing is decoded.
    if (skeleton !== undefined) {
      if (keyIs(b, keyStart, keyEnd, 'metadata')) metadatas++;
      return -1;
    }
    const key = keyAt(b, keyStart, keyEnd);
    if (key === 'metadata') metadatas++;
    if (key === 'metadata' && b[start] === OPEN_BRACE) {
      if (keep !== undefined) {
        // Name, namespace and resourceVersion alone first: a dropped object costs no more.
        const head = identityAt(b, start, inner);
        if (!keepsObject(keep, head.value)) {
          skeleton = { metadata: head.value };
          return head.end;
        }
      }
      const metadata = metadataAt(b, start, inner);
      defineEager(target, key, metadata.value, source);
      return metadata.end;
    }
    const valueStop = valueEnd(b, start, inner);
    if (valueStop - start < EAGER_BYTES || key === 'apiVersion' || key === 'kind') {
      defineEager(target, key, valueAt(b, start, valueStop), source);
    } else defineLazy(target, key, text(b, start, valueStop), (source ??= { texts: new Map() }));
    return valueStop;
  });
  // `metadata` more than once (no server sends it): the last one decides, as it is the one JSON.parse keeps.
  if (metadatas > 1 && keep !== undefined) return { value: lastMetadataDecides(b, i, keep, outer), end };
  if (skeleton !== undefined) return { value: markSkipped(skeleton), end };
  if (source !== undefined && source.texts.size > 0) sources.stamp(target, source);
  return { value: target, end };
}

/** The object at `i` decoded whole, then dropped or not by `keep` from its (last) metadata: the rare path. */
function lastMetadataDecides(b: Buffer, i: number, keep: KeepObject, outer: number): Record<string, unknown> {
  const whole = lazyObjectAt(b, i, undefined, outer).value;
  const metadata = whole.metadata;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return whole;
  return droppedSkeleton(keep, identityOf(metadata as Record<string, unknown>)) ?? whole;
}

/**
 * Says, from an object's metadata alone (`{ metadata }`), whether to decode the
 * rest of it. An object it rejects is scanned for its structure only and comes
 * out as that skeleton, marked {@link isSkipped}: e.g. a sharded informer drops
 * the objects of shards it does not hold without decoding them.
 */
export type KeepObject = (skeleton: { readonly metadata: Readonly<Record<string, unknown>> }) => boolean;

/**
 * The mark of a skeleton: a private field stamped on it, which no key, descriptor, prototype or deep comparison
 * shows (the skeleton stays a plain `{ metadata }`), and which costs next to nothing to add and to test. A
 * `WeakSet` entry per skeleton, the mark before, was a quarter of a dropped protobuf object's decoding
 * (docs/performance.md, "Where a dropped object's time goes"). Copies are not marked, as before.
 */
class SkippedMark extends Stamp {
  readonly #skipped = true;

  static has(object: object): boolean {
    return #skipped in object;
  }
}

function markSkipped<T extends object>(skeleton: T): T {
  return new SkippedMark(skeleton) as object as T;
}

/** True for the `{ metadata }` skeleton of an object a {@link KeepObject} rejected. */
export function isSkipped(object: unknown): boolean {
  return typeof object === 'object' && object !== null && SkippedMark.has(object);
}

/**
 * The skeleton of an object `keep` rejects (seeing its `metadata` identity), marked {@link isSkipped}, or undefined
 * when it keeps it: for decoders of other encodings (protobuf) that drop objects the same way.
 */
export function droppedSkeleton(keep: KeepObject, metadata: Record<string, unknown>): { metadata: Record<string, unknown> } | undefined {
  return keepsObject(keep, metadata) ? undefined : markSkipped({ metadata });
}

/** A predicate that throws keeps the object: it is decoded, and the reader decides. */
function keepsObject(keep: KeepObject, metadata: Record<string, unknown>): boolean {
  try {
    return keep({ metadata }) !== false;
  } catch {
    return true;
  }
}

export function bytesOf(input: string | Buffer): Buffer {
  return typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
}

/** A whole text (or its UTF-8 bytes) holding one object, decoded lazily. */
export function lazyParseObject(input: string | Buffer): Record<string, unknown> {
  const b = bytesOf(input);
  const { value, end } = lazyObjectAt(b, skipSpace(b, 0), undefined, 0);
  if (skipSpace(b, end) !== b.length) fail('unexpected text after the object', end);
  return value;
}

/** Whether a {@link KeepObject} may drop the object of an event of this type: an ERROR's Status and a BOOKMARK are read whole (as in protobuf). */
function isDroppable(type: unknown): boolean {
  return type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED';
}

/**
 * A watch line `{"type": …, "object": {…}}` (its text or UTF-8 bytes; the
 * bytes may be reused once this returns) with a lazily decoded object; other
 * members of the line (there are none in practice) are parsed. A repeated
 * member: the last one wins, as with JSON.parse. `keep` sees the objects of
 * ADDED, MODIFIED and DELETED events only.
 */
export function lazyParseWatchLine(input: string | Buffer, keep?: KeepObject): { type: unknown; object: unknown } {
  const b = bytesOf(input);
  const event: { type: unknown; object: unknown } = { type: undefined, object: undefined };
  let count = 0;
  let objectAt = -1;
  let keptBy: KeepObject | undefined;
  const end = members(b, skipSpace(b, 0), 0, (keyStart, keyEnd, start) => {
    count++;
    const isObject = keyIs(b, keyStart, keyEnd, 'object');
    if (isObject && b[start] === OPEN_BRACE) {
      // The type read so far (none yet: the object may be dropped, and then decoded again below if it is no change).
      keptBy = event.type === undefined || isDroppable(event.type) ? keep : undefined;
      const object = lazyObjectAt(b, start, keptBy, 1);
      event.object = object.value;
      objectAt = start;
      return object.end;
    }
    const valueStop = valueEnd(b, start, 1);
    if (isObject) {
      event.object = valueAt(b, start, valueStop);
      objectAt = -1;
    } else if (keyIs(b, keyStart, keyEnd, 'type')) event.type = valueAt(b, start, valueStop);
    return valueStop;
  });
  if (skipSpace(b, end) !== b.length) fail('unexpected text after the event', end);
  if (count !== 2) otherMembers.add(event);
  // The rare path: the type came after the object, or more than once.
  if (objectAt >= 0 && keep !== undefined) {
    const wanted = isDroppable(event.type) ? keep : undefined;
    if (wanted !== keptBy && (wanted !== undefined || isSkipped(event.object))) event.object = lazyObjectAt(b, objectAt, wanted, 1).value;
  }
  return event;
}

/** Events of lines that had members other than one `type` and one `object` (or repeated them). */
const otherMembers = new WeakSet<object>();

/**
 * True for an event {@link lazyParseWatchLine} read from a line with more (or fewer) members than one
 * `type` and one `object`: the event is not the line exactly (it leaves the others out).
 */
export function hasOtherMembers(event: unknown): boolean {
  return typeof event === 'object' && event !== null && otherMembers.has(event);
}

/**
 * A shallow copy of `object` with `metadata` replaced. Members of a lazily
 * decoded object (JSON or protobuf) that were not read stay unparsed in the copy
 * (spreading would parse them all); any other object is copied by spreading.
 */
export function withMetadata<T extends { metadata: unknown }>(object: T, metadata: T['metadata']): T {
  const protobuf = protobufWithMetadata(object, metadata);
  if (protobuf !== undefined) return protobuf as T;
  const source = sources.get(object);
  if (!source || source.frozen) return { ...object, metadata };
  const copy: Record<string, unknown> = {};
  const texts = new Map<string, string>();
  for (const key of Object.keys(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, key)!;
    const json = source.texts.get(key);
    if (descriptor.get && json !== undefined) {
      texts.set(key, json);
      Object.defineProperty(copy, key, accessorFor(key));
    } else defineEager(copy, key, key === 'metadata' ? metadata : (object as Record<string, unknown>)[key], undefined);
  }
  if (!Object.prototype.hasOwnProperty.call(copy, 'metadata')) copy.metadata = metadata;
  if (texts.size > 0) sources.stamp(copy, { texts });
  return copy as T;
}

/** True when `object` still has members that have not been parsed (JSON) or decoded (protobuf). */
export function hasUnparsedMembers(object: object): boolean {
  return sources.get(object) !== undefined || hasUnreadProtobufMembers(object);
}

/**
 * The JSON text of `object`'s member `key` while it is still unparsed, else undefined: what a measure of size
 * reads instead of the member, so that measuring a lazily decoded object does not decode it.
 */
export function unparsedText(object: object, key: string): string | undefined {
  const source = sources.get(object);
  return source?.frozen?.has(key) ? undefined : source?.texts.get(key);
}

/** Deeper than this, {@link jsonText} leaves the rest to `JSON.stringify` (which names a cycle). */
const SPLICE_DEPTH = 32;

/**
 * `JSON.stringify(value)`, but a lazily decoded object's members not yet parsed are written as the JSON text they were
 * read from, not parsed: the same values once parsed, in the server's spelling (its escapes, its number forms; text
 * holding a line break, whitespace a server may put between tokens, is written again so that the result is one line).
 * The objects are left as they were: what `record` writes a listed object with, so that recording does not decode it.
 * Anything else, and an object with a `toJSON`, is `JSON.stringify`'s; undefined where that gives undefined.
 */
export function jsonText(value: unknown): string | undefined {
  return spliced(value, 0);
}

function spliced(value: unknown, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null || depth > SPLICE_DEPTH) return JSON.stringify(value);
  const source = sources.get(value);
  // An object whose members are all parsed may still hold a lazy metadata (its managedFields).
  if (source === undefined && !hasLazyMetadata(value)) return JSON.stringify(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(value);
  const object = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(object)) {
    const json = source === undefined || source.frozen?.has(key) ? undefined : source.texts.get(key);
    // The text stands for the member only while the member is still the accessor that would parse it.
    const unread = json !== undefined && Object.getOwnPropertyDescriptor(object, key)?.get === accessorFor(key).get;
    const member = unread ? oneLine(json) : spliced(object[key], depth + 1);
    if (member !== undefined) out += `${out === '' ? '{' : ','}${JSON.stringify(key)}:${member}`;
  }
  return out === '' ? '{}' : `${out}}`;
}

function hasLazyMetadata(object: object): boolean {
  const metadata = Object.getOwnPropertyDescriptor(object, 'metadata')?.value as unknown;
  return typeof metadata === 'object' && metadata !== null && sources.get(metadata) !== undefined;
}

/** A member's text without line breaks: whitespace outside its strings (within them, JSON has only escapes). */
function oneLine(json: string): string {
  return json.includes('\n') || json.includes('\r') ? JSON.stringify(JSON.parse(json)) : json;
}
