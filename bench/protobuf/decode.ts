/**
 * A prototype protobuf decoder for Kubernetes objects (issue #36, step 1): from the wire straight to the JSON shape
 * users get from the API server's JSON today (Quantity and IntOrString as strings/numbers, Time as RFC 3339, maps as
 * objects, bytes as base64, FieldsV1 as the JSON object its raw bytes hold), walking the schema of schema.ts. Fields
 * the schema does not know are skipped by wire type. Every length is checked against its enclosing message before
 * anything is read or allocated (a truncated or garbage input throws a `ProtobufError`).
 *
 * Three modes: `decodeObject` (eager, everything now), `decodeObjectLazy` (metadata now but for managedFields, every
 * other top-level member an own enumerable accessor decoding its bytes on first read, as src/1-transport/lazyJson.ts
 * does for JSON), and `peekNameNamespace` (metadata.name and .namespace only, everything else skipped by length).
 */
import { compileDecoders, type MessageDecoder } from './codegen.ts';
import { K, allMessages, message, hasMessage, type Field, type Message } from '../../src/1-transport/protobuf/schema.ts';

export class ProtobufError extends Error {}

/** `k8s\0`, the magic of every protobuf body and of a watch event's object. */
export const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

let buf: Buffer = Buffer.alloc(0);
let pos = 0;

function fail(what: string): never {
  throw new ProtobufError(`protobuf: ${what} at byte ${pos}`);
}

function varint(end: number): number {
  let result = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= end) fail('truncated varint');
    const b = buf[pos++]!;
    result |= (b & 0x7f) << shift;
    if (b < 0x80) return result;
  }
  // Over 28 bits: multiply (exact up to 2^53; a 10-byte negative is recomputed by int64).
  let factor = 2 ** 28;
  for (let i = 4; i < 10; i++) {
    if (pos >= end) fail('truncated varint');
    const b = buf[pos++]!;
    result += (b & 0x7f) * factor;
    if (b < 0x80) return result;
    factor *= 128;
  }
  return fail('varint over 10 bytes');
}

/** A varint as a signed 64-bit integer (two's complement, as int64 and negative int32 are written). */
function int64(end: number): number {
  const start = pos;
  const v = varint(end);
  if (pos - start < 10) return v;
  // Negative: ten bytes. Recompute from the low 32 and the next 32 bits.
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < 10; i++) {
    const b = buf[start + i]! & 0x7f;
    if (i < 4) lo |= b << (7 * i);
    else if (i === 4) {
      lo |= (b & 0x0f) << 28;
      hi |= b >> 4;
    } else hi |= b << (7 * i - 32);
  }
  return (hi | 0) * 2 ** 32 + (lo >>> 0);
}

function lengthEnd(end: number): number {
  const length = varint(end);
  if (length > end - pos) fail(`length ${length} past the end of its message (${end - pos} bytes left)`);
  return pos + length;
}

function skip(wireType: number, end: number): void {
  switch (wireType) {
    case 0:
      varint(end);
      return;
    case 1:
      if (end - pos < 8) fail('truncated fixed64');
      pos += 8;
      return;
    case 2:
      pos = lengthEnd(end);
      return;
    case 5:
      if (end - pos < 4) fail('truncated fixed32');
      pos += 4;
      return;
    default:
      fail(`wire type ${wireType}`);
  }
}

/** Node's Buffer slicers (untyped in @types/node): flat strings, without toString's argument checks. */
interface Slicers {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
}

/**
 * UTF-8 bytes as a flat string. (Built a character at a time, a string is a tree of cons strings until flattened:
 * a cached object would hold ~16 bytes more per character.) Short ASCII strings come from a small cache keyed by a
 * hash of their bytes, checked byte for byte: most of an object's strings recur (enum values, label keys and
 * values, images, node names), and one shared copy is cheaper to make and to hold than one per object.
 */
const CACHE_SIZE = 4096;
const cachedStrings: string[] = new Array<string>(CACHE_SIZE).fill('');
function str(start: number, end: number): string {
  const length = end - start;
  if (length > 32 || length === 0) return length === 0 ? '' : (buf as unknown as Slicers).utf8Slice(start, end);
  let hash = length;
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c >= 0x80) return (buf as unknown as Slicers).utf8Slice(start, end);
    hash = Math.imul(hash ^ c, 0x01000193);
  }
  const slot = (hash ^ (hash >>> 15)) & (CACHE_SIZE - 1);
  const cached = cachedStrings[slot]!;
  if (cached.length === length) {
    let same = true;
    for (let i = 0; i < length; i++)
      if (cached.charCodeAt(i) !== buf[start + i]) {
        same = false;
        break;
      }
    if (same) return cached;
  }
  const fresh = (buf as unknown as Slicers).latin1Slice(start, end);
  cachedStrings[slot] = fresh;
  return fresh;
}

/** RFC 3339 text of a time, written into bytes and sliced once: a flat string (see str). */
const timeText = Buffer.alloc(32);
function digits(at: number, n: number, width: number): void {
  for (let i = at + width - 1; i >= at; i--) {
    timeText[i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
}

/** A google.protobuf.Timestamp-shaped message (seconds 1, nanos 2) as the JSON of metav1.Time or MicroTime. */
function timestamp(end: number, micro: boolean): string | null {
  if (pos === end) return null;
  let seconds = 0;
  let nanos = 0;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) seconds = int64(end);
    else if (tag === 0x10) nanos = int64(end);
    else skip(tag & 7, end);
  }
  const d = new Date(seconds * 1000);
  digits(0, d.getUTCFullYear(), 4);
  timeText[4] = 0x2d;
  digits(5, d.getUTCMonth() + 1, 2);
  timeText[7] = 0x2d;
  digits(8, d.getUTCDate(), 2);
  timeText[10] = 0x54;
  digits(11, d.getUTCHours(), 2);
  timeText[13] = 0x3a;
  digits(14, d.getUTCMinutes(), 2);
  timeText[16] = 0x3a;
  digits(17, d.getUTCSeconds(), 2);
  if (!micro) {
    timeText[19] = 0x5a;
    return (timeText as unknown as Slicers).latin1Slice(0, 20);
  }
  timeText[19] = 0x2e;
  digits(20, Math.floor(nanos / 1000), 6);
  timeText[26] = 0x5a;
  return (timeText as unknown as Slicers).latin1Slice(0, 27);
}

function quantity(end: number): string {
  let s = '';
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) {
      const e = lengthEnd(end);
      s = str(pos, e);
      pos = e;
    } else skip(tag & 7, end);
  }
  return s === '' ? '0' : s;
}

function intOrString(end: number): string | number {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) type = varint(end);
    else if (tag === 0x10) intVal = int64(end);
    else if (tag === 0x1a) {
      const e = lengthEnd(end);
      strVal = str(pos, e);
      pos = e;
    } else skip(tag & 7, end);
  }
  return type === 1 ? strVal : intVal;
}

/** A message whose field 1 is `raw` bytes: FieldsV1 (JSON) or RawExtension (JSON, or `k8s\0` + Unknown). */
function rawField(end: number): unknown {
  let value: unknown = null;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) {
      const e = lengthEnd(end);
      value = rawValue(pos, e);
      pos = e;
    } else skip(tag & 7, end);
  }
  return value;
}

function rawValue(start: number, end: number): unknown {
  if (
    end - start >= 4 &&
    buf[start] === MAGIC[0] &&
    buf[start + 1] === MAGIC[1] &&
    buf[start + 2] === MAGIC[2] &&
    buf[start + 3] === MAGIC[3]
  ) {
    const saved = buf;
    const value = decodeEnvelopeAt(buf, start, end, 'eager');
    buf = saved;
    return value;
  }
  return end === start ? null : JSON.parse(buf.toString('utf8', start, end));
}

function duration(end: number): string {
  let nanos = 0;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) nanos = int64(end);
    else skip(tag & 7, end);
  }
  // Go's time.Duration.String for whole seconds (the prototype's types never carry sub-second durations).
  const s = Math.round(nanos / 1e9);
  if (s === 0) return '0s';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${m}m${s % 60}s` : m > 0 ? `${m}m${s % 60}s` : `${s}s`;
}

/** One value of a length-delimited field of kind `kind` ending at `end` (pos is at its first byte). */
function lengthDelimited(f: Field, end: number): unknown {
  switch (f.kind) {
    case K.string:
      return str(pos, end);
    case K.bytes:
      return buf.toString('base64', pos, end);
    case K.msg: {
      const target: Record<string, unknown> = {};
      decoders.get(f.msg!.name)!(target, end);
      return target;
    }
    case K.time:
      return timestamp(end, false);
    case K.microTime:
      return timestamp(end, true);
    case K.quantity:
      return quantity(end);
    case K.intOrString:
      return intOrString(end);
    case K.fieldsV1:
    case K.raw:
      return rawField(end);
    case K.duration:
      return duration(end);
    default:
      return fail(`field ${f.json}: a length-delimited value for a scalar`);
  }
}

function scalar(f: Field, wireType: number, end: number): unknown {
  if (wireType === 0) {
    if (f.kind === K.int32) return int64(end);
    if (f.kind === K.int64) return int64(end);
    if (f.kind === K.bool) return varint(end) !== 0;
  } else if (wireType === 1 && f.kind === K.double) {
    if (end - pos < 8) fail('truncated double');
    const v = buf.readDoubleLE(pos);
    pos += 8;
    return v;
  }
  return fail(`field ${f.json}: wire type ${wireType} for kind ${f.kind}`);
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false;
}

/** A map entry (key 1, value 2) into `target[f.json]`. */
function mapEntry(target: Record<string, unknown>, f: Field, end: number): void {
  let key = '';
  let value: unknown = f.kind === K.string || f.kind === K.bytes ? '' : undefined;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) {
      const e = lengthEnd(end);
      key = str(pos, e);
      pos = e;
    } else if (tag >>> 3 === 2) {
      if ((tag & 7) === 2) {
        const e = lengthEnd(end);
        value = lengthDelimited(f, e);
        pos = e;
      } else value = scalar(f, tag & 7, end);
    } else skip(tag & 7, end);
  }
  if (value === undefined) value = defaultOf(f, true);
  const map = (target[f.json] ??= {}) as Record<string, unknown>;
  map[key] = value;
}

function one(f: Field, wireType: number, end: number): unknown {
  if (wireType !== 2) return scalar(f, wireType, end);
  const e = lengthEnd(end);
  const value = lengthDelimited(f, e);
  pos = e;
  return value;
}

/** Decodes the fields of `msg` from pos to `end` into `target`. */
export function decodeInto(target: Record<string, unknown>, end: number, msg: Message): void {
  while (pos < end) {
    const tag = varint(end);
    const f = msg.byNumber[tag >>> 3];
    if (f === undefined) skip(tag & 7, end);
    else field(target, f, tag & 7, end);
  }
  const always = msg.always;
  for (let i = 0; i < always.length; i++) {
    const f = always[i]!;
    if (target[f.json] === undefined) target[f.json] = defaultOf(f, false);
  }
  trimLists(target, msg);
}

/**
 * A list grown by push has room for more (17 slots for 1 to 17 elements): cached, that is ~130 bytes per list
 * JSON.parse does not hold. An exact copy instead.
 */
function trimLists(target: Record<string, unknown>, msg: Message): void {
  const lists = msg.lists;
  for (let i = 0; i < lists.length; i++) {
    const list = target[lists[i]!] as unknown[] | null | undefined;
    if (list) target[lists[i]!] = list.slice();
  }
}

/** One occurrence of field `f` (its tag read) into `target`. */
function field(target: Record<string, unknown>, f: Field, wireType: number, end: number): void {
  if (f.map) {
    if (wireType !== 2) fail(`map ${f.json}: wire type ${wireType}`);
    mapEntry(target, f, lengthEnd(end));
  } else if (f.rep) {
    const list = (target[f.json] ??= []) as unknown[];
    if (wireType === 2 && f.kind >= K.int32 && f.kind <= K.double) {
      const e = lengthEnd(end);
      while (pos < e) list.push(scalar(f, f.kind === K.double ? 1 : 0, e));
    } else list.push(one(f, wireType, end));
  } else if (f.inline) {
    if (wireType !== 2) fail(`inline ${f.json}: wire type ${wireType}`);
    decodeInto(target, lengthEnd(end), f.msg!);
  } else {
    const value = one(f, wireType, end);
    if (f.presence !== 'omit' || !isZero(value)) target[f.json] = value;
  }
}

/** What encoding/json emits for an absent value (for a map's value: the Go zero value). */
function defaultOf(f: Field, mapValue: boolean): unknown {
  if ((f.rep || f.map) && !mapValue) return f.json === 'items' ? [] : null;
  switch (f.kind) {
    case K.string:
    case K.bytes:
      return '';
    case K.int32:
    case K.int64:
    case K.double:
      return 0;
    case K.bool:
      return false;
    case K.msg: {
      const target: Record<string, unknown> = {};
      const saved = pos;
      decodeInto(target, pos, f.msg!);
      pos = saved;
      return target;
    }
    case K.quantity:
      return '0';
    case K.intOrString:
      return 0;
    case K.duration:
      return '0s';
    default:
      return null;
  }
}

/** `checked`: lazy, after a walk of the whole object that checks every length and wire type (step 2's rule). */
type Mode = 'eager' | 'lazy' | 'checked';

/** The envelope (`k8s\0` + runtime.Unknown) from `start` to `end` of `bytes`, its object decoded by `mode`. */
function decodeEnvelopeAt(bytes: Buffer, start: number, end: number, mode: Mode): Record<string, unknown> {
  buf = bytes;
  pos = start;
  if (
    end - start < 4 ||
    bytes[start] !== MAGIC[0] ||
    bytes[start + 1] !== MAGIC[1] ||
    bytes[start + 2] !== MAGIC[2] ||
    bytes[start + 3] !== MAGIC[3]
  )
    fail('no k8s\\0 magic');
  pos += 4;
  let apiVersion = '';
  let kind = '';
  let rawStart = -1;
  let rawEnd = -1;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) {
      const e = lengthEnd(end);
      while (pos < e) {
        const t = varint(e);
        if (t === 0x0a || t === 0x12) {
          const se = lengthEnd(e);
          if (t === 0x0a) apiVersion = str(pos, se);
          else kind = str(pos, se);
          pos = se;
        } else skip(t & 7, e);
      }
    } else if (tag === 0x12) {
      rawEnd = lengthEnd(end);
      rawStart = pos;
      pos = rawEnd;
    } else skip(tag & 7, end);
  }
  if (rawStart < 0) fail('an Unknown without raw');
  if (!hasMessage(kind)) fail(`unknown kind ${JSON.stringify(kind)}`);
  const object: Record<string, unknown> = { apiVersion, kind };
  pos = rawStart;
  if (mode === 'checked') {
    checkMessage(rawEnd, message(kind));
    pos = rawStart;
  }
  if (mode !== 'eager') decodeLazyInto(object, rawEnd, message(kind));
  else decoders.get(kind)!(object, rawEnd);
  return object;
}

const EMPTY = Buffer.alloc(0);
/** Lets go of the input (the decoder's current buffer would keep a frame, a page or a whole chunk alive). */
function released<T>(value: T): T {
  buf = EMPTY;
  return value;
}

/** A whole protobuf body (a list, an object, a Status), eagerly. */
export function decodeBody(bytes: Buffer): Record<string, unknown> {
  return released(decodeEnvelopeAt(bytes, 0, bytes.length, 'eager'));
}

/** A whole protobuf body whose object is decoded lazily (metadata now, the rest on first access). */
export function decodeBodyLazy(bytes: Buffer): Record<string, unknown> {
  return released(decodeEnvelopeAt(bytes, 0, bytes.length, 'lazy'));
}

/** One watch frame's WatchEvent (without its 4-byte length), the object decoded by `mode`. */
export function decodeWatchEvent(frame: Buffer, mode: Mode = 'eager'): { type: string; object: Record<string, unknown> } {
  buf = frame;
  pos = 0;
  const end = frame.length;
  let type = '';
  let objectStart = -1;
  let objectEnd = -1;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) {
      const e = lengthEnd(end);
      type = str(pos, e);
      pos = e;
    } else if (tag === 0x12) {
      const e = lengthEnd(end);
      // RawExtension: raw (1).
      while (pos < e) {
        const t = varint(e);
        if (t === 0x0a) {
          objectEnd = lengthEnd(e);
          objectStart = pos;
          pos = objectEnd;
        } else skip(t & 7, e);
      }
    } else skip(tag & 7, end);
  }
  if (objectStart < 0) fail('a WatchEvent without an object');
  return released({ type, object: decodeEnvelopeAt(frame, objectStart, objectEnd, mode) });
}

/** Splits a watch body into its frames (4-byte big-endian length, then a WatchEvent), each length checked first. */
export function splitFrames(body: Buffer, maxFrameBytes = 16 << 20): Buffer[] {
  const frames: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    if (body.length - at < 4) throw new ProtobufError(`protobuf: a truncated frame length at byte ${at}`);
    const length = body.readUInt32BE(at);
    if (length > maxFrameBytes) throw new ProtobufError(`protobuf: a frame of ${length} bytes over the limit of ${maxFrameBytes}`);
    if (length > body.length - at - 4) throw new ProtobufError(`protobuf: a truncated frame at byte ${at}`);
    frames.push(body.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return frames;
}

// ---- lazy objects ----

/** A lazy object's undecoded members: the message of the object and a copy of the bytes of its lazy fields. */
interface LazySource {
  readonly msg: Message;
  /** The bytes, one character each (a one-byte string: one cheap allocation, no ArrayBuffer to track and free). */
  readonly bytes: string;
}
const lazySources = new WeakMap<object, LazySource>();
const accessors = new Map<string, PropertyDescriptor>();

function materialize(target: object, key: string): unknown {
  const source = lazySources.get(target)!;
  const savedBuf = buf;
  const savedPos = pos;
  buf = Buffer.from(source.bytes, 'latin1');
  pos = 0;
  const scratch: Record<string, unknown> = {};
  const end = buf.length;
  // Decode only the fields of this member; the rest skipped by length.
  while (pos < end) {
    const tag = varint(end);
    const f = source.msg.byNumber[tag >>> 3];
    if (f?.json === key) field(scratch, f, tag & 7, end);
    else skip(tag & 7, end);
  }
  buf = savedBuf;
  pos = savedPos;
  const value = scratch[key] ?? null;
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  return value;
}

function accessorFor(key: string): PropertyDescriptor {
  let descriptor = accessors.get(key);
  if (!descriptor) {
    descriptor = {
      get(this: object) {
        return materialize(this, key);
      },
      set(this: object, value: unknown) {
        Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true });
      },
      enumerable: true,
      configurable: true,
    };
    accessors.set(key, descriptor);
  }
  return descriptor;
}

/**
 * Decodes `metadata` (all but managedFields) now; every other member, and metadata.managedFields, becomes a lazy
 * accessor over one copy of the bytes of its fields (a copy, not a view: a view would keep the frame or the list
 * page alive as long as the object).
 */
/** The wire type a field's values come in (a packed list aside). */
function wireTypeOf(f: Field): number {
  if (f.map) return 2;
  if (f.kind === K.int32 || f.kind === K.int64 || f.kind === K.bool) return 0;
  return f.kind === K.double ? 1 : 2;
}

/**
 * Walks a message from pos to `end` without building anything: every length within its enclosing message, every
 * known field in its wire type, nested messages (map entries, times, quantities included) likewise. What it accepts,
 * the lazy accessors decode without an error. (FieldsV1 and RawExtension hold JSON, which it does not scan.)
 */
export function checkMessage(end: number, msg: Message | undefined): void {
  while (pos < end) {
    const tag = varint(end);
    const wireType = tag & 7;
    const f = msg?.byNumber[tag >>> 3];
    if (f === undefined || (f.rep && wireType === 2 && wireTypeOf(f) !== 2)) {
      skip(wireType, end);
      continue;
    }
    if (wireType !== wireTypeOf(f)) fail(`field ${f.json}: wire type ${wireType}`);
    if (wireType !== 2) {
      skip(wireType, end);
      continue;
    }
    const e = lengthEnd(end);
    if (f.map) checkMessage(e, f.kind === K.msg ? mapEntryOf(f.msg!) : undefined);
    else if (f.kind === K.msg) checkMessage(e, f.msg);
    else if (f.kind >= K.time && f.kind !== K.fieldsV1 && f.kind !== K.raw) checkMessage(e, undefined);
    pos = e;
  }
}

const entries = new Map<Message, Message>();
/** A map entry's message: key (1) a string, value (2) of the map's message. */
function mapEntryOf(value: Message): Message {
  let entry = entries.get(value);
  if (!entry) {
    const key: Field = { n: 1, json: 'key', kind: K.string, presence: 'always', rep: false, map: false, inline: false, msg: undefined };
    const val: Field = { n: 2, json: 'value', kind: K.msg, presence: 'always', rep: false, map: false, inline: false, msg: value };
    entry = { name: `${value.name}Entry`, byNumber: [undefined, key, val], fields: [key, val], always: [], lists: [] };
    entries.set(value, entry);
  }
  return entry;
}

function decodeLazyInto(target: Record<string, unknown>, end: number, msg: Message): void {
  collectLazy(target, end, msg, true);
}

/** At the top level, every member but metadata is lazy; in metadata, managedFields. */
function collectLazy(target: Record<string, unknown>, end: number, msg: Message, top: boolean): void {
  const spans: number[] = [];
  const keys: string[] = [];
  let bytes = 0;
  while (pos < end) {
    const tagStart = pos;
    const tag = varint(end);
    const f = msg.byNumber[tag >>> 3];
    if (f === undefined) {
      skip(tag & 7, end);
    } else if ((top ? f.json !== 'metadata' : f.json === 'managedFields') && (f.kind === K.msg || f.rep || f.map)) {
      skip(tag & 7, end);
      spans.push(tagStart, pos);
      bytes += pos - tagStart;
      if (!keys.includes(f.json)) keys.push(f.json);
    } else if (top && f.json === 'metadata' && (tag & 7) === 2) {
      const e = lengthEnd(end);
      const meta: Record<string, unknown> = {};
      collectLazy(meta, e, f.msg!, false);
      target.metadata = meta;
      pos = e;
    } else field(target, f, tag & 7, end);
  }
  fillAlways(target, msg, keys);
  if (keys.length === 0) return;
  let contiguous = true;
  for (let i = 2; i < spans.length; i += 2) if (spans[i] !== spans[i - 1]) contiguous = false;
  let copy: string;
  if (contiguous) copy = (buf as unknown as Slicers).latin1Slice(spans[0]!, spans[spans.length - 1]!);
  else {
    const joined = Buffer.allocUnsafe(bytes);
    let at = 0;
    for (let i = 0; i < spans.length; i += 2) at += buf.copy(joined, at, spans[i], spans[i + 1]);
    copy = (joined as unknown as Slicers).latin1Slice(0, bytes);
  }
  lazySources.set(target, { msg, bytes: copy });
  for (const key of keys) Object.defineProperty(target, key, accessorFor(key));
}

function fillAlways(target: Record<string, unknown>, msg: Message, lazyKeys: readonly string[]): void {
  for (const f of msg.always) if (target[f.json] === undefined && !lazyKeys.includes(f.json)) target[f.json] = defaultOf(f, false);
}

/**
 * A sharded informer's drop decision: metadata.name and .namespace of one watch frame's object, everything else
 * skipped by length (the envelope, the WatchEvent, the other fields of the object and of its metadata).
 */
export function peekNameNamespace(frame: Buffer): { type: string; name: string; namespace: string } {
  buf = frame;
  pos = 0;
  const end = frame.length;
  let type = '';
  let name = '';
  let namespace = '';
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) {
      const e = lengthEnd(end);
      type = str(pos, e);
      pos = e;
    } else if (tag === 0x12) {
      const e = lengthEnd(end);
      while (pos < e) {
        const t = varint(e);
        if (t !== 0x0a) {
          skip(t & 7, e);
          continue;
        }
        const rawEnd = lengthEnd(e);
        pos += 4; // k8s\0, checked below
        if (buf[pos - 4] !== MAGIC[0] || buf[pos - 1] !== MAGIC[3]) fail('no k8s\\0 magic');
        while (pos < rawEnd) {
          const u = varint(rawEnd);
          if (u !== 0x12) {
            skip(u & 7, rawEnd);
            continue;
          }
          const objectEnd = lengthEnd(rawEnd);
          while (pos < objectEnd) {
            const o = varint(objectEnd);
            if (o !== 0x0a) {
              skip(o & 7, objectEnd);
              continue;
            }
            const metaEnd = lengthEnd(objectEnd);
            while (pos < metaEnd) {
              const m = varint(metaEnd);
              if (m === 0x0a || m === 0x1a) {
                const se = lengthEnd(metaEnd);
                if (m === 0x0a) name = str(pos, se);
                else namespace = str(pos, se);
                pos = se;
              } else skip(m & 7, metaEnd);
            }
          }
        }
      }
    } else skip(tag & 7, end);
  }
  return released({ type, name, namespace });
}

/** The eager decoders specialised per message (codegen.ts); `decodeInto` is the schema walker they fall back on. */
const decoders: Map<string, MessageDecoder> = compileDecoders(allMessages(), {
  varint,
  int64,
  lengthEnd,
  skip,
  str,
  base64: (start, end) => buf.toString('base64', start, end),
  timestamp,
  quantity,
  intOrString,
  rawField,
  duration,
  getPos: () => pos,
  setPos: (at) => {
    pos = at;
  },
  generic: (target, name, tag, end) => field(target, message(name).byNumber[tag >>> 3]!, tag & 7, end),
});
