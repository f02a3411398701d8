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
 * a member later can never throw. Positions in errors count bytes.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** A lazy object's unparsed members: per key, its JSON text. */
interface Source {
  readonly texts: Map<string, string>;
  /** Values read from a frozen object, which cannot take them as data properties. */
  frozen?: Map<string, unknown>;
}

/** The lazy members' sources, keyed by the object holding them. */
const sources = new WeakMap<object, Source>();

/** The text could not be scanned as JSON of the expected shape. */
class LazyJsonError extends Error {
  override readonly name = 'LazyJsonError';
}

function fail(what: string, at: number): never {
  throw new LazyJsonError(`${what} at position ${at}`);
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(b: Buffer, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/**
 * The index after the string whose opening quote is at `i`, checking it as
 * JSON.parse would: no raw control character, only JSON's escapes.
 */
function stringEnd(b: Buffer, i: number): number {
  for (let j = i + 1; ; j++) {
    const c = b[j];
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) j = escapeEnd(b, j) - 1;
    // One test for both a control character and the end of the bytes (undefined).
    else if (!(c! >= 0x20)) return c === undefined ? fail('unterminated string', i) : fail('control character in string', j);
  }
}

/** The index after the escape whose backslash is at `j`: only JSON's escapes. */
function escapeEnd(b: Buffer, j: number): number {
  const e = b[j + 1];
  if (e === 0x75 /* u */) {
    if (!(isHex(b[j + 2]) && isHex(b[j + 3]) && isHex(b[j + 4]) && isHex(b[j + 5]))) fail('bad unicode escape', j);
    return j + 6;
  }
  if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74)
    fail('bad escape', j);
  return j + 2;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66));
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** The index after the number at `i`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. */
function numberEnd(b: Buffer, i: number): number {
  let j = i;
  if (b[j] === 0x2d) j++;
  if (b[j] === 0x30) j++;
  else if (isDigit(b[j])) while (isDigit(b[j])) j++;
  else fail('bad number', i);
  if (b[j] === 0x2e) {
    j++;
    if (!isDigit(b[j])) fail('bad number', i);
    while (isDigit(b[j])) j++;
  }
  if (b[j] === 0x65 || b[j] === 0x45) {
    j++;
    if (b[j] === 0x2b || b[j] === 0x2d) j++;
    if (!isDigit(b[j])) fail('bad number', i);
    while (isDigit(b[j])) j++;
  }
  return j;
}

/** The index after `word` (an ASCII literal) at `i`. */
function literalEnd(b: Buffer, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) fail('unexpected character', i + k);
  return i + word.length;
}

/** The index after a scalar (string, number, true, false, null) at `i`. */
function scalarEnd(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === 0x74) return literalEnd(b, i, 'true');
  if (c === 0x66) return literalEnd(b, i, 'false');
  if (c === 0x6e) return literalEnd(b, i, 'null');
  if (c === 0x2d || isDigit(c)) return numberEnd(b, i);
  return c === undefined ? fail('missing value', i) : fail('unexpected character', i);
}

/** The open containers of the value being scanned, innermost last: 1 for an object, 0 for an array (grows as needed). */
let containers = new Uint8Array(256);

/**
 * The index after the JSON value that starts at `i` (no leading space),
 * checking its whole syntax. Nesting is followed with an explicit stack, so
 * depth costs no recursion (JSON.parse takes deep nesting too).
 */
function valueEnd(b: Buffer, i: number): number {
  let d = b[i];
  if (d !== OPEN_BRACE && d !== OPEN_BRACKET) return scalarEnd(b, i);
  let depth = 0;
  let j = i;
  for (;;) {
    // A value starts at j.
    d = b[j];
    if (d === QUOTE) {
      j = stringEnd(b, j);
    } else if (d === OPEN_BRACE || d === OPEN_BRACKET) {
      const isObject = d === OPEN_BRACE;
      j++;
      while (isSpace(b[j])) j++;
      if (b[j] === (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) j++;
      else {
        if (depth === containers.length) {
          const grown = new Uint8Array(depth * 2);
          grown.set(containers);
          containers = grown;
        }
        containers[depth++] = isObject ? 1 : 0;
        if (isObject) j = memberValueStart(b, j);
        continue;
      }
    } else j = scalarEnd(b, j);
    // A value ended at j: close containers, or go on to the next member or element.
    for (;;) {
      if (depth === 0) return j;
      while (isSpace(b[j])) j++;
      const inObject = containers[depth - 1] === 1;
      const e = b[j];
      if (e === COMMA) {
        j++;
        while (isSpace(b[j])) j++;
        if (inObject) j = memberValueStart(b, j);
        break;
      }
      if (e === (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) {
        depth--;
        j++;
        continue;
      }
      fail(inObject ? 'expected "," or "}"' : 'expected "," or "]"', j);
    }
  }
}

/**
 * The index after the value at `i`, following its structure only (nesting and
 * strings): for text that JSON.parse reads whole right away (the metadata), so
 * its syntax is checked there, once.
 */
function skipValue(b: Buffer, i: number): number {
  const length = b.length;
  const c = b[i];
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) return scalarEnd(b, i);
  let depth = 0;
  let j = i;
  while (j < length) {
    const d = b[j];
    if (d === QUOTE) {
      j = stringEnd(b, j);
      continue;
    }
    if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
    else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return j + 1;
    j++;
  }
  return fail('unterminated value', i);
}

/** At a member's key (`j`): checks `"key" :`, returns where its value starts. */
function memberValueStart(b: Buffer, j: number): number {
  if (b[j] !== QUOTE) fail('expected a key', j);
  j = stringEnd(b, j);
  while (isSpace(b[j])) j++;
  if (b[j] !== COLON) fail('expected ":"', j);
  j++;
  while (isSpace(b[j])) j++;
  return j;
}

/** The JSON text of `b` from `start` to `end`. */
function text(b: Buffer, start: number, end: number): string {
  return b.toString('utf8', start, end);
}

/** The key whose quotes are at `start` and `end - 1`, unescaped. */
function keyAt(b: Buffer, start: number, end: number): string {
  for (let j = start + 1; j < end - 1; j++) if (b[j] === BACKSLASH) return JSON.parse(text(b, start, end)) as string;
  return shortText(b, start + 1, end - 1);
}

/** Short strings decoded lately, by a hash of their bytes: keys and short values repeat object after object. */
const recent: (string | undefined)[] = new Array<string | undefined>(1024).fill(undefined);

/**
 * The text of `b` from `start` to `end`, taken from {@link recent} when the same bytes were decoded lately (a
 * comparison costs less than a decoding, and the cache keeps one copy): for short ASCII texts; others are decoded.
 */
function shortText(b: Buffer, start: number, end: number): string {
  const length = end - start;
  if (length > 32) return text(b, start, end);
  let hash = length;
  for (let j = start; j < end; j++) {
    const c = b[j]!;
    if (c >= 0x80) return text(b, start, end);
    hash = Math.imul(hash ^ c, 0x01000193);
  }
  const slot = (hash ^ (hash >>> 15)) & 1023;
  const known = recent[slot];
  if (known !== undefined && known.length === length) {
    let k = 0;
    while (k < length && known.charCodeAt(k) === b[start + k]) k++;
    if (k === length) return known;
  }
  const decoded = text(b, start, end);
  recent[slot] = decoded;
  return decoded;
}

/** The value from `start` to `end`: a string without escapes as its text, anything else parsed. */
function valueAt(b: Buffer, start: number, end: number): unknown {
  if (b[start] === QUOTE && end - start >= 2 && b[end - 1] === QUOTE) {
    let j = start + 1;
    while (j < end - 1 && b[j] !== BACKSLASH) j++;
    if (j === end - 1) return shortText(b, start + 1, end - 1);
  }
  return JSON.parse(text(b, start, end));
}

/** Whether the key whose quotes are at `start` and `end - 1` is `name` (an ASCII name). */
function keyIs(b: Buffer, start: number, end: number, name: string): boolean {
  for (let j = start + 1; j < end - 1; j++) if (b[j] === BACKSLASH) return keyAt(b, start, end) === name;
  if (end - start - 2 !== name.length) return false;
  for (let k = 0; k < name.length; k++) if (b[start + 1 + k] !== name.charCodeAt(k)) return false;
  return true;
}

/**
 * Walks the members of the object at `i`: `visit(keyStart, keyEnd, valueStart)`
 * returns the index after the value it consumed, or -1 to have it skipped
 * (structure only: the caller parses the skipped text itself).
 * Returns the index after the closing brace.
 */
function members(b: Buffer, i: number, visit: (keyStart: number, keyEnd: number, start: number) => number): number {
  if (b[i] !== OPEN_BRACE) fail('expected an object', i);
  let j = skipSpace(b, i + 1);
  if (b[j] === CLOSE_BRACE) return j + 1;
  for (;;) {
    if (b[j] !== QUOTE) fail('expected a key', j);
    const keyStart = j;
    const keyEnd = stringEnd(b, j);
    j = skipSpace(b, keyEnd);
    if (b[j] !== COLON) fail('expected ":"', j);
    const start = skipSpace(b, j + 1);
    let end = visit(keyStart, keyEnd, start);
    if (end < 0) end = skipValue(b, start);
    j = skipSpace(b, end);
    const c = b[j];
    if (c === CLOSE_BRACE) return j + 1;
    if (c !== COMMA) fail('expected "," or "}"', j);
    j = skipSpace(b, j + 1);
  }
}

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
  if (source && source.texts.delete(key) && source.texts.size === 0) sources.delete(target);
}

/** One accessor pair per member name, shared by every lazy object. */
const accessors = new Map<string, PropertyDescriptor>();

function accessorFor(key: string): PropertyDescriptor {
  let descriptor = accessors.get(key);
  if (!descriptor) {
    descriptor = {
      get(this: object) {
        return materialize(this, key);
      },
      set(this: object, value: unknown) {
        settle(this, key, value, sources.get(this));
      },
      enumerable: true,
      configurable: true,
    };
    accessors.set(key, descriptor);
  }
  return descriptor;
}

function defineLazy(target: Record<string, unknown>, key: string, json: string, source: Source): void {
  // A repeated key: the last one wins, as with JSON.parse.
  source.texts.set(key, json);
  Object.defineProperty(target, key, accessorFor(key));
}

function defineEager(target: Record<string, unknown>, key: string, value: unknown, source: Source | undefined): void {
  source?.texts.delete(key);
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Members shorter than this are parsed at once (a lazy member costs about that much). */
const EAGER_BYTES = 24;

/** Parses the metadata object at `i`, all but `managedFields`, which stays lazy. */
function metadataAt(b: Buffer, i: number): { value: Record<string, unknown>; end: number } {
  let cutStart = -1;
  let cutEnd = -1;
  const end = members(b, i, (keyStart, keyEnd, start) => {
    if (!keyIs(b, keyStart, keyEnd, 'managedFields')) return -1;
    cutStart = start;
    cutEnd = valueEnd(b, start);
    return cutEnd;
  });
  if (cutStart < 0) return { value: JSON.parse(text(b, i, end)) as Record<string, unknown>, end };
  // Parse the metadata text with managedFields' value replaced by null, then
  // make that member lazy in place (so the key keeps its position).
  const value = JSON.parse(`${text(b, i, cutStart)}null${text(b, cutEnd, end)}`) as Record<string, unknown>;
  if (cutEnd - cutStart >= EAGER_BYTES) {
    const source: Source = { texts: new Map() };
    defineLazy(value, 'managedFields', text(b, cutStart, cutEnd), source);
    sources.set(value, source);
  } else value.managedFields = JSON.parse(text(b, cutStart, cutEnd));
  return { value, end };
}

/** The members of the metadata object at `i` that say which object it is; the others are skipped unparsed. */
function identityAt(b: Buffer, i: number): { value: Record<string, unknown>; end: number } {
  const value: Record<string, unknown> = {};
  const end = members(b, i, (keyStart, keyEnd, start) => {
    const wanted =
      keyIs(b, keyStart, keyEnd, 'name') || keyIs(b, keyStart, keyEnd, 'namespace') || keyIs(b, keyStart, keyEnd, 'resourceVersion');
    if (b[start] !== QUOTE || !wanted) return -1;
    const stop = stringEnd(b, start);
    value[keyAt(b, keyStart, keyEnd)] = keyAt(b, start, stop);
    return stop;
  });
  return { value, end };
}

/**
 * The object whose `{` is at `i` of `b`, decoded lazily, and the index after it.
 * `apiVersion`, `kind`, `metadata` and short members are parsed at once; the
 * others keep a decoded copy of their text (`b` may be reused afterwards).
 */
function lazyObjectAt(b: Buffer, i: number, keep?: KeepObject): { value: Record<string, unknown>; end: number } {
  const target: Record<string, unknown> = {};
  let source: Source | undefined;
  let skeleton: { metadata: Record<string, unknown> } | undefined;
  const end = members(b, i, (keyStart, keyEnd, start) => {
    // Dropped: the rest is followed for its structure only, nothing is decoded.
    if (skeleton !== undefined) return -1;
    const key = keyAt(b, keyStart, keyEnd);
    if (key === 'metadata' && b[start] === OPEN_BRACE) {
      if (keep !== undefined) {
        // Name, namespace and resourceVersion alone first: a dropped object costs no more.
        const head = identityAt(b, start);
        if (!keepsObject(keep, head.value)) {
          skeleton = { metadata: head.value };
          return head.end;
        }
      }
      const metadata = metadataAt(b, start);
      defineEager(target, key, metadata.value, source);
      return metadata.end;
    }
    const valueStop = valueEnd(b, start);
    if (valueStop - start < EAGER_BYTES || key === 'apiVersion' || key === 'kind') {
      defineEager(target, key, valueAt(b, start, valueStop), source);
    } else defineLazy(target, key, text(b, start, valueStop), (source ??= { texts: new Map() }));
    return valueStop;
  });
  if (skeleton !== undefined) {
    skipped.add(skeleton);
    return { value: skeleton, end };
  }
  if (source !== undefined && source.texts.size > 0) sources.set(target, source);
  return { value: target, end };
}

/**
 * Says, from an object's metadata alone (`{ metadata }`), whether to decode the
 * rest of it. An object it rejects is scanned for its structure only and comes
 * out as that skeleton, marked {@link isSkipped}: e.g. a sharded informer drops
 * the objects of shards it does not hold without decoding them.
 */
export type KeepObject = (skeleton: { readonly metadata: Readonly<Record<string, unknown>> }) => boolean;

/** Skeletons of objects a {@link KeepObject} rejected. */
const skipped = new WeakSet<object>();

/** True for the `{ metadata }` skeleton of an object a {@link KeepObject} rejected. */
export function isSkipped(object: unknown): boolean {
  return typeof object === 'object' && object !== null && skipped.has(object);
}

/** A predicate that throws keeps the object: it is decoded, and the reader decides. */
function keepsObject(keep: KeepObject, metadata: Record<string, unknown>): boolean {
  try {
    return keep({ metadata }) !== false;
  } catch {
    return true;
  }
}

function bytesOf(input: string | Buffer): Buffer {
  return typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
}

/** A whole text (or its UTF-8 bytes) holding one object, decoded lazily. */
export function lazyParseObject(input: string | Buffer): Record<string, unknown> {
  const b = bytesOf(input);
  const { value, end } = lazyObjectAt(b, skipSpace(b, 0));
  if (skipSpace(b, end) !== b.length) fail('unexpected text after the object', end);
  return value;
}

/**
 * A watch line `{"type": …, "object": {…}}` (its text or UTF-8 bytes; the
 * bytes may be reused once this returns) with a lazily decoded object; other
 * members of the line (there are none in practice) are parsed.
 */
export function lazyParseWatchLine(input: string | Buffer, keep?: KeepObject): { type: unknown; object: unknown } {
  const b = bytesOf(input);
  const event: { type: unknown; object: unknown } = { type: undefined, object: undefined };
  const end = members(b, skipSpace(b, 0), (keyStart, keyEnd, start) => {
    if (keyIs(b, keyStart, keyEnd, 'object') && b[start] === OPEN_BRACE) {
      const object = lazyObjectAt(b, start, keep);
      event.object = object.value;
      return object.end;
    }
    const valueStop = valueEnd(b, start);
    if (keyIs(b, keyStart, keyEnd, 'type')) event.type = valueAt(b, start, valueStop);
    return valueStop;
  });
  if (skipSpace(b, end) !== b.length) fail('unexpected text after the event', end);
  return event;
}

/**
 * A list response (its text or UTF-8 bytes) with lazily decoded items: the
 * list's own members are parsed, `items` becomes an array of lazy objects,
 * each holding texts of its own, so that a cached item never keeps its whole
 * page alive.
 */
export function lazyParseList(input: string | Buffer, keep?: KeepObject): Record<string, unknown> {
  const reader = new LazyListReader(keep);
  reader.push(bytesOf(input));
  return reader.end();
}

/** Where a {@link LazyListReader} is in the list's text. */
const ListAt = {
  /** Before the list's `{`. */
  Start: 0,
  /** After `{`: a key or `}`. */
  FirstKey: 1,
  /** After `,`: a key. */
  Key: 2,
  /** After `"items": [`: an item or `]`. */
  FirstItem: 3,
  /** After an item's `,`: an item. */
  Item: 4,
  /** After an item: `,` or `]`. */
  AfterItem: 5,
  /** After a member's value: `,` or `}`. */
  AfterMember: 6,
  /** After the list's `}`: only white space. */
  Done: 7,
} as const;
type ListAt = (typeof ListAt)[keyof typeof ListAt];

/**
 * A list response decoded lazily as its bytes arrive (the transport's list body with `lazyDecode`), as
 * {@link lazyParseList} decodes it whole: no page is ever held as one buffer or one string. The bytes
 * that arrived and were not taken yet wait in one window (reused: items keep copies of their texts).
 *
 * Each step (a key and its value, an item, a separator) is taken only when the bytes it read end before
 * those that arrived (so a number cut by a chunk is never taken short), and tried only once enough bytes
 * wait (see `ahead`); one that cannot be taken yet is tried again later, and for good at {@link end}.
 * A malformed list is therefore reported by `end`, never by `push`.
 */
export class LazyListReader {
  private readonly keep: KeepObject | undefined;
  private readonly list: Record<string, unknown> = {};
  private items: unknown[] = [];
  private at: ListAt = ListAt.Start;
  /**
   * Bytes not taken yet (from the start of the next step on) at `window[0, filled)`, then a NUL byte: a
   * scan that reaches the end of what has arrived stops there on a byte no JSON text holds, instead of
   * reading past the end of the buffer (V8 makes every later read of the scanner's functions slower
   * once one of them has read out of bounds). Items keep copies of their texts, so the window is reused.
   */
  private window: Buffer = Buffer.alloc(0);
  private filled = 0;
  /**
   * A step is tried once this many bytes after its start have arrived: twice the longest step taken or
   * tried so far. So the scan practically never stops at the end of what has arrived (which would cost
   * an exception, a scan again later, and slower code: V8 optimizes the scanner's functions for the
   * paths they have taken), and a step that does is tried again once the bytes waiting have doubled (a
   * long item arriving in small chunks is scanned O(its length) times in all, not once per chunk).
   */
  private ahead = 16 * 1024;
  /** What the step being tried found: its next place, and its value (set only when taken). */
  private next: ListAt = ListAt.Start;
  private key: string | undefined;
  private isItem = false;
  private value: unknown;

  constructor(keep?: KeepObject) {
    this.keep = keep;
  }

  /** More bytes of the response (the buffer may be reused once this returns). */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const needed = this.filled + chunk.length + 1;
    if (needed > this.window.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.window.length, 64 * 1024));
      this.window.copy(grown, 0, 0, this.filled);
      this.window = grown;
    }
    chunk.copy(this.window, this.filled);
    this.filled += chunk.length;
    if (this.filled >= this.ahead) this.run(false);
  }

  /** The list, once every byte has been pushed; throws when the text is not a JSON object. */
  end(): Record<string, unknown> {
    if (this.window.length === 0) this.window = Buffer.alloc(1);
    this.run(true);
    this.window = Buffer.alloc(0);
    return this.list;
  }

  private run(final: boolean): void {
    const length = this.filled;
    this.window[length] = 0;
    const b = this.window.subarray(0, length + 1);
    let pos = 0;
    for (;;) {
      if (final && pos >= length && this.at === ListAt.Done) return;
      // Not tried with fewer than `ahead` bytes after its start: it would most likely stop at their end.
      if (!final && length - pos < this.ahead) break;
      this.key = undefined;
      this.isItem = false;
      let end: number;
      try {
        end = this.step(b, pos, length);
      } catch (error) {
        if (final) throw error;
        end = length;
      }
      // It stopped at the end, or read up to it (a number might go on): tried again once twice as many bytes wait.
      if (!final && end >= length) {
        this.ahead = Math.max(this.ahead, 2 * (length - pos));
        break;
      }
      // The next steps wait for twice the longest so far (an item) to have arrived.
      this.ahead = Math.max(this.ahead, 2 * (end - pos));
      this.take();
      pos = end;
    }
    this.window.copyWithin(0, pos, length);
    this.filled = length - pos;
  }

  /** Commits the step just tried. */
  private take(): void {
    const key = this.key;
    if (key !== undefined) {
      defineEager(this.list, key, this.value, undefined);
      this.key = undefined;
    } else if (this.isItem) this.items.push(this.value);
    this.value = undefined;
    this.at = this.next;
  }

  /**
   * Tries the step at `i` of the `length` bytes that have arrived (`b[length]` is the NUL byte): returns
   * the index after it, and leaves what it found for {@link take}; throws when it cannot be taken.
   */
  private step(b: Buffer, i: number, length: number): number {
    let j = skipSpace(b, i);
    const c = b[j];
    switch (this.at) {
      case ListAt.Start:
        if (c !== OPEN_BRACE) fail('expected an object', j);
        this.next = ListAt.FirstKey;
        return j + 1;
      case ListAt.FirstKey:
        if (c === CLOSE_BRACE) {
          this.next = ListAt.Done;
          return j + 1;
        }
        return this.member(b, j);
      case ListAt.Key:
        return this.member(b, j);
      case ListAt.FirstItem:
        if (c === CLOSE_BRACKET) {
          this.next = ListAt.AfterMember;
          return j + 1;
        }
        return this.item(b, j);
      case ListAt.Item:
        return this.item(b, j);
      case ListAt.AfterItem:
        if (c === COMMA) this.next = ListAt.Item;
        else if (c === CLOSE_BRACKET) this.next = ListAt.AfterMember;
        else fail('expected "," or "]"', j);
        return j + 1;
      case ListAt.AfterMember:
        if (c === COMMA) this.next = ListAt.Key;
        else if (c === CLOSE_BRACE) this.next = ListAt.Done;
        else fail('expected "," or "}"', j);
        return j + 1;
      case ListAt.Done:
        if (j < length) fail('unexpected text after the list', j);
        this.next = ListAt.Done;
        return j;
    }
  }

  /** A member of the list at `j` (its key): `"items": [` opens the items, any other value is parsed whole. */
  private member(b: Buffer, j: number): number {
    if (b[j] !== QUOTE) fail('expected a key', j);
    const keyEnd = stringEnd(b, j);
    const key = keyAt(b, j, keyEnd);
    let k = skipSpace(b, keyEnd);
    if (b[k] !== COLON) fail('expected ":"', k);
    k = skipSpace(b, k + 1);
    if (key === 'items' && b[k] === OPEN_BRACKET) {
      // A repeated key: the last one wins, as with JSON.parse.
      this.items = [];
      this.key = key;
      this.value = this.items;
      this.next = ListAt.FirstItem;
      return k + 1;
    }
    const stop = valueEnd(b, k);
    this.key = key;
    this.value = JSON.parse(text(b, k, stop));
    this.next = ListAt.AfterMember;
    return stop;
  }

  /** An item at `j`: an object decoded lazily, anything else parsed. */
  private item(b: Buffer, j: number): number {
    this.next = ListAt.AfterItem;
    this.isItem = true;
    if (b[j] === OPEN_BRACE) {
      const item = lazyObjectAt(b, j, this.keep);
      this.value = item.value;
      return item.end;
    }
    const stop = valueEnd(b, j);
    this.value = JSON.parse(text(b, j, stop));
    return stop;
  }
}

/**
 * A shallow copy of `object` with `metadata` replaced. Members of a lazily
 * decoded object that were not read stay unparsed in the copy (spreading would
 * parse them all); any other object is copied by spreading.
 */
export function withMetadata<T extends { metadata: unknown }>(object: T, metadata: T['metadata']): T {
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
  if (texts.size > 0) sources.set(copy, { texts });
  return copy as T;
}

/** True when `object` still has members that have not been parsed. */
export function hasUnparsedMembers(object: object): boolean {
  return sources.has(object);
}

/**
 * The JSON text of `object`'s member `key` while it is still unparsed, else undefined: what a measure of size
 * reads instead of the member, so that measuring a lazily decoded object does not decode it.
 */
export function unparsedText(object: object, key: string): string | undefined {
  const source = sources.get(object);
  return source?.frozen?.has(key) ? undefined : source?.texts.get(key);
}
