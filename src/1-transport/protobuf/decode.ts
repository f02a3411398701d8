/**
 * Kubernetes' protobuf (`application/vnd.kubernetes.protobuf`, issue #36) for the transport: a body or a watch
 * event's object is `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw: the kind's own message}. Lists and
 * watch events are decoded for a sharded informer's path: an object its `keep` rejects is dropped after reading
 * its name, namespace and resourceVersion (a skeleton marked `isSkipped`); a kept one is walked whole on arrival
 * (`checkMessage`, check.ts) and decoded lazily (lazy.ts). Error Status objects are decoded whole.
 *
 * Every function throws a `ProtobufError` for bytes it cannot read (truncated, garbage, a wrong wire type, a kind
 * the schema does not know); the transport reports it as `MalformedLine`.
 */
import { droppedSkeleton, type KeepObject } from '../lazyJson.ts';
import { decodeLazyInto, plainObjects } from './lazy.ts';
import { hasMessage, K, knowsKind, message, type Message } from './schema.ts';
import { checkMessage } from './check.ts';
import { decodeInto } from './values.ts';
import {
  begin,
  fail,
  failPastEnd,
  hasMagic,
  lengthEnd,
  pos,
  ProtobufError,
  release,
  seek,
  skip,
  stringValue,
  uniqueStringValue,
  varint,
} from './wire.ts';

export { ProtobufError } from './wire.ts';

/** The media type of Kubernetes' protobuf. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** Whether a response's Content-Type is Kubernetes' protobuf. */
export function isProtobuf(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && value.trim().toLowerCase().startsWith(PROTOBUF_MEDIA_TYPE);
}

/**
 * Whether the schema (k8s.io/api core/v1, apps/v1 and coordination/v1, see schema.generated.ts) decodes a
 * resource's objects and lists: only then is protobuf asked for it.
 */
export function protobufKnows(resource: { readonly group: string; readonly version: string; readonly kind?: string }): boolean {
  const apiVersion = resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
  return resource.kind !== undefined && knowsKind(apiVersion, resource.kind);
}

interface Envelope {
  readonly apiVersion: string;
  readonly kind: string;
  readonly rawStart: number;
  readonly rawEnd: number;
}

/**
 * The envelope from pos to `end`: `k8s\0`, then runtime.Unknown (typeMeta 1, raw 2; contentEncoding and contentType
 * skipped). With `once` (a list body), a second typeMeta or raw is a fault: no server writes one, and a list read as it
 * arrives cannot go back to decode its raw again under another kind (see {@link listTrailer}).
 */
export function envelope(end: number, once = false): Envelope {
  if (!hasMagic(pos, end)) fail('no k8s\\0 magic');
  seek(pos + 4);
  let apiVersion = '';
  let kind = '';
  let typeMeta = false;
  let rawStart = -1;
  let rawEnd = -1;
  while (pos < end) {
    const tag = varint(end);
    if (once && (tag === 0x0a ? typeMeta : tag === 0x12 && rawStart >= 0)) fail(secondField(tag));
    if (tag === 0x0a) {
      typeMeta = true;
      const e = lengthEnd(end);
      while (pos < e) {
        const t = varint(e);
        if (t === 0x0a) apiVersion = stringValue(e);
        else if (t === 0x12) kind = stringValue(e);
        else skip(t & 7, e);
      }
    } else if (tag === 0x12) {
      rawEnd = lengthEnd(end);
      rawStart = pos;
      seek(rawEnd);
    } else if (tag === CONTENT_TYPE_TAG) contentType(end);
    else skip(tag & 7, end);
  }
  if (rawStart < 0) fail('an Unknown without raw');
  if (!hasMessage(kind)) fail(`a kind the schema does not know (${JSON.stringify(kind.slice(0, 64))})`);
  return { apiVersion, kind, rawStart, rawEnd };
}

/** runtime.Unknown's contentType (4): empty from a server, or protobuf's; a JSON raw (say) is not read as protobuf. */
const CONTENT_TYPE_TAG = 0x22;

function contentType(end: number): void {
  const at = pos;
  const e = lengthEnd(end);
  if (e === pos) return; // empty, as a server writes it
  seek(at);
  const type = stringValue(end);
  if (type !== PROTOBUF_MEDIA_TYPE) fail(`an Unknown of content type ${JSON.stringify(type.slice(0, 64))}, not protobuf`);
}

const secondField = (tag: number) => `a list body with a second ${tag === 0x0a ? 'typeMeta' : 'raw'}`;

/** A whole body holding one object (an error Status), decoded whole. */
export function decodeObjectBody(bytes: Buffer): Record<string, unknown> {
  begin(bytes, 0);
  try {
    const { apiVersion, kind, rawStart, rawEnd } = envelope(bytes.length);
    seek(rawStart);
    return decodeInto({ kind, apiVersion }, rawEnd, message(kind));
  } finally {
    release(undefined);
  }
}

/**
 * A list whose items went past the cap its reader was given (the transport's: what its byte limit allows at a fixed
 * heap charge an item, listBudget.ts's `CHARGE_PER_ITEM`): thrown at the item's header, before it is decoded, by
 * {@link decodeListBody} and {@link decodeListField} alike, so that a page of tiny items stops where it passes the cap.
 */
export class TooManyItems extends Error {
  readonly cap: number;
  constructor(cap: number) {
    super(`more than ${cap} items`);
    this.cap = cap;
  }
}

/**
 * A list body (`…List`): its ListMeta decoded, each item dropped by `keep` or checked and decoded lazily; past
 * `maxItems` items, {@link TooManyItems}.
 */
export function decodeListBody(bytes: Buffer, keep: KeepObject | undefined, maxItems = Infinity): Record<string, unknown> {
  begin(bytes, 0);
  try {
    const { apiVersion, kind, rawStart, rawEnd } = envelope(bytes.length, true);
    // A Status answered with 200 is handed on whole: the transport reports a failure Status as its error (as JSON's).
    if (kind === 'Status') {
      seek(rawStart);
      return decodeInto({ kind, apiVersion }, rawEnd, message(kind));
    }
    const list = message(kind);
    const itemsField = list.fields.find((f) => f.json === 'items');
    const metaField = list.fields.find((f) => f.json === 'metadata');
    if (!itemsField?.rep || itemsField.kind !== K.msg || metaField?.kind !== K.msg) fail(`${kind} is not a list`);
    const items: unknown[] = [];
    const value: Record<string, unknown> = { kind, apiVersion, metadata: {}, items };
    seek(rawStart);
    let hasMetadata = false;
    while (pos < rawEnd) {
      const tag = varint(rawEnd);
      if (tag === ((metaField.n << 3) | 2)) {
        const e = lengthEnd(rawEnd);
        // At the value's first byte, where decodeListField (given the value) refuses it.
        if (hasMetadata) fail(SECOND_LIST_METADATA);
        hasMetadata = true;
        value.metadata = decodeInto({}, e, metaField.msg!);
      } else if (tag === ((itemsField.n << 3) | 2)) {
        const e = lengthEnd(rawEnd);
        if (items.length >= maxItems) throw new TooManyItems(maxItems);
        items.push(item({}, e, itemsField.msg!, keep));
        seek(e);
      } else skip(tag & 7, rawEnd);
    }
    return value;
  } finally {
    release(undefined);
  }
}

/** A list kind's `metadata` and `items` fields (their tags and messages), or undefined when `kind` is not a list. */
export interface ListFields {
  readonly metaTag: number;
  readonly meta: Message;
  readonly itemsTag: number;
  readonly items: Message;
}

export function listFields(kind: string): ListFields | undefined {
  if (!hasMessage(kind)) return undefined;
  const list = message(kind);
  const itemsField = list.fields.find((f) => f.json === 'items');
  const metaField = list.fields.find((f) => f.json === 'metadata');
  if (!itemsField?.rep || itemsField.kind !== K.msg || metaField?.kind !== K.msg) return undefined;
  return { metaTag: (metaField.n << 3) | 2, meta: metaField.msg!, itemsTag: (itemsField.n << 3) | 2, items: itemsField.msg! };
}

/** The head of a list body as a server writes it: `k8s\0`, typeMeta, then raw's tag and length (raw's bytes follow). */
export interface ListHead {
  readonly apiVersion: string;
  readonly kind: string;
  /** Where raw's bytes start in the body, and how many there are. */
  readonly rawStart: number;
  readonly rawLength: number;
}

/**
 * The {@link ListHead} at the start of `bytes` (its first bytes only), or undefined when they do not hold one in that
 * order (the body is then decoded whole, by {@link decodeListBody}, which accepts any order or reports the fault).
 */
export function listHead(bytes: Buffer): ListHead | undefined {
  begin(bytes, 0);
  try {
    const end = bytes.length;
    if (!hasMagic(0, end) || bytes[4] !== 0x0a) return undefined;
    seek(5);
    const e = lengthEnd(end);
    let apiVersion = '';
    let kind = '';
    while (pos < e) {
      const t = varint(e);
      if (t === 0x0a) apiVersion = stringValue(e);
      else if (t === 0x12) kind = stringValue(e);
      else skip(t & 7, e);
    }
    if (varint(end) !== 0x12) return undefined;
    const rawLength = varint(end);
    return { apiVersion, kind, rawStart: pos, rawLength };
  } catch (error) {
    if (error instanceof ProtobufError) return undefined;
    throw error;
  } finally {
    release(undefined);
  }
}

/**
 * The field of a list's raw at `at` in `bytes`, read as {@link decodeListBody} reads it: its tag, where its value
 * starts and where the field ends (for a field other than the list's metadata and items, skipped: both where it ends).
 * `bytes` starts at byte `from` of the body (faults name body offsets), raw ends at `rawEnd` (in `bytes`' offsets,
 * maybe past its end), and `bytes` holds at least `min(20, rawEnd - at)` bytes from `at` (a header's most). Throws the
 * `ProtobufError` decodeListBody throws for the same bytes.
 */
export function listFieldAt(
  bytes: Buffer,
  at: number,
  rawEnd: number,
  fields: ListFields,
  from: number,
): { tag: number; start: number; end: number } {
  begin(bytes, at, from);
  try {
    const tag = varint(rawEnd);
    if (tag === fields.metaTag || tag === fields.itemsTag) {
      const end = lengthEnd(rawEnd);
      return { tag, start: pos, end };
    }
    skip(tag & 7, rawEnd);
    return { tag, start: pos, end: pos };
  } finally {
    release(undefined);
  }
}

/**
 * A list's metadata a second time: refused, as a singular message twice in an object is (check.ts's `twice`: Go would
 * merge the two). {@link decodeListField} is given a list's fields one by one: the lists whose metadata it decoded.
 */
const SECOND_LIST_METADATA = 'field metadata: a singular message twice';
const listsWithMetadata = new WeakSet<object>();

/**
 * One field of a list's raw message, its bytes from `start` to `end` in `bytes` (read in place; `bytes` starts at byte
 * `from` of the body): the list's metadata into `list.metadata`, an item (dropped by `keep`, or checked and decoded
 * lazily) onto `items`, anything else skipped.
 */
export function decodeListField(
  list: Record<string, unknown>,
  items: unknown[],
  fields: ListFields,
  tag: number,
  bytes: Buffer,
  start: number,
  end: number,
  keep: KeepObject | undefined,
  from = 0,
): void {
  begin(bytes, start, from);
  try {
    if (tag === fields.metaTag) {
      if (listsWithMetadata.has(list)) fail(SECOND_LIST_METADATA);
      listsWithMetadata.add(list);
      list.metadata = decodeInto({}, end, fields.meta);
    } else if (tag === fields.itemsTag) items.push(item({}, end, fields.items, keep));
  } finally {
    release(undefined);
  }
}

/**
 * What {@link decodeListBody} says of a body in a server's order ({@link listHead}) whose raw the body does not hold
 * whole: `total` bytes, raw's length past their end. Throws its `ProtobufError`.
 */
export function failRawPastEnd(head: ListHead, total: number): never {
  begin(EMPTY, head.rawStart);
  try {
    return failPastEnd(head.rawLength, total - head.rawStart);
  } finally {
    release(undefined);
  }
}

/**
 * The fields after a list's raw (the Unknown's contentEncoding and contentType, empty from a server), starting at byte
 * `from` of the body, read as {@link decodeListBody} reads them: a second typeMeta or raw is a fault, as any bytes that
 * do not read. Throws its `ProtobufError`.
 */
export function listTrailer(bytes: Buffer, from: number): void {
  begin(bytes, 0, from);
  try {
    while (pos < bytes.length) {
      const tag = varint(bytes.length);
      if (tag === 0x0a || tag === 0x12) fail(secondField(tag));
      if (tag === CONTENT_TYPE_TAG) contentType(bytes.length);
      else skip(tag & 7, bytes.length);
    }
  } finally {
    release(undefined);
  }
}

const EMPTY = Buffer.alloc(0);

/** One object from pos to `end` into `target`: a skeleton if `keep` rejects it, else checked and decoded lazily. */
function item(target: Record<string, unknown>, end: number, msg: Message, keep: KeepObject | undefined): object {
  const start = pos;
  if (keep !== undefined) {
    const skeleton = droppedSkeleton(keep, identity(end, msg));
    if (skeleton !== undefined) return skeleton;
    seek(start);
  }
  checkMessage(end, msg);
  seek(start);
  return decodeLazyInto(target, end, msg);
}

const OBJECT_META = message('ObjectMeta');
const stringTag = (json: string) => (OBJECT_META.fields.find((f) => f.json === json)!.n << 3) | 2;
const NAME_TAG = stringTag('name');
const NAMESPACE_TAG = stringTag('namespace');
const RV_TAG = stringTag('resourceVersion');

/** Per message, the tag of its `metadata` field (-1 without one). */
const metadataTags = new Map<Message, number>();
function metadataTag(msg: Message): number {
  let tag = metadataTags.get(msg);
  if (tag === undefined) {
    const metaField = msg.fields.find((f) => f.json === 'metadata');
    metadataTags.set(msg, (tag = metaField ? (metaField.n << 3) | 2 : -1));
  }
  return tag;
}

/**
 * An object's metadata.name, .namespace and .resourceVersion (those present), everything else skipped by length
 * (ObjectMeta's other fields included: no string is made for labels, annotations or managedFields).
 */
export function identity(end: number, msg: Message): Record<string, unknown> {
  const metaTag = metadataTag(msg);
  let found: Record<string, unknown> | undefined;
  while (pos < end) {
    const tag = varint(end);
    if (tag !== metaTag) {
      skip(tag & 7, end);
      continue;
    }
    // A second metadata is refused, as check.ts's walk refuses it in a kept object (Go would merge the two).
    if (found !== undefined) fail('field metadata: a singular message twice');
    found = {};
    const metaEnd = lengthEnd(end);
    while (pos < metaEnd) {
      const m = varint(metaEnd);
      if (m === NAME_TAG) found.name = uniqueStringValue(metaEnd);
      else if (m === NAMESPACE_TAG) found.namespace = stringValue(metaEnd);
      else if (m === RV_TAG) found.resourceVersion = uniqueStringValue(metaEnd);
      else skip(m & 7, metaEnd);
    }
  }
  return found ?? {};
}

/**
 * A WatchEvent from the reader's position to `end`: its type, and where its object (the RawExtension's raw, field 1)
 * starts and ends; the reader is left at the object's start.
 */
export function watchEvent(end: number): { type: string; objectStart: number; objectEnd: number } {
  let type = '';
  let objectStart = -1;
  let objectEnd = -1;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) type = stringValue(end);
    else if (tag === 0x12) {
      const e = lengthEnd(end);
      // RawExtension: raw (1).
      while (pos < e) {
        const t = varint(e);
        if (t === 0x0a) {
          objectEnd = lengthEnd(e);
          objectStart = pos;
          seek(objectEnd);
        } else skip(t & 7, e);
      }
    } else skip(tag & 7, end);
  }
  if (objectStart < 0) fail('a WatchEvent without an object');
  seek(objectStart);
  return { type, objectStart, objectEnd };
}

const DROPPABLE = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/**
 * A kept watch object's top, `kind` and `apiVersion` first (as the server's JSON): made by a constructor of plain
 * objects (lazy.ts's `plainObjects`), whose objects V8 sizes by its first ones (kind, apiVersion, metadata and the
 * lazy source's private field: four), where a literal `{kind, apiVersion}` holds two and grows a property array for
 * the other two, one more object kept per cached object (docs/performance.md, "Protobuf: where an event and a listed item go now").
 */
const WatchObject = plainObjects();

/**
 * One watch frame (a WatchEvent without its 4-byte length): `{type, object}`, the object dropped by `keep` (a
 * change event only), decoded whole (ERROR: a Status), or checked and decoded lazily (with apiVersion and kind).
 */
export function decodeWatchFrame(frame: Buffer, keep: KeepObject | undefined): { type: string; object: Record<string, unknown> } {
  begin(frame, 0);
  try {
    const { type, objectEnd } = watchEvent(frame.length);
    const { apiVersion, kind, rawStart, rawEnd } = envelope(objectEnd);
    seek(rawStart);
    if (type === 'ERROR') {
      return { type, object: decodeInto({ kind, apiVersion }, rawEnd, message(kind)) };
    }
    const top = new WatchObject();
    top.kind = kind;
    top.apiVersion = apiVersion;
    const object = item(top, rawEnd, message(kind), DROPPABLE.has(type) ? keep : undefined);
    return { type, object: object as Record<string, unknown> };
  } finally {
    release(undefined);
  }
}
