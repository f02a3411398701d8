/**
 * The protobuf wire format, read from one buffer at a time (issue #36; from the prototype of bench/protobuf):
 * varints, lengths, skipping by wire type, strings. Every length is checked against the end of its enclosing
 * message before anything is read or allocated; a truncated or garbage input throws a {@link ProtobufError}.
 *
 * The reader's buffer and position are this module's (one decode runs at a time: everything after the
 * transport is synchronous), set by {@link begin} and let go by {@link release}.
 */

/** A frame or body that cannot be read as protobuf: the transport reports it as `MalformedLine`. */
export class ProtobufError extends Error {}

/** `k8s\0`, the magic of every protobuf body and of a watch event's object. */
export const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

export let buf: Buffer = Buffer.alloc(0);
export let pos = 0;
/** Where `buf`'s first byte is in the body it was cut from (a list page read in pieces): faults name body offsets. */
let origin = 0;

/** Reads `bytes` from `at` from now on; `bytes` starts at byte `from` of its body (named by faults). */
export function begin(bytes: Buffer, at: number, from = 0): void {
  buf = bytes;
  pos = at;
  origin = from;
}

export function seek(at: number): void {
  pos = at;
}

const EMPTY = Buffer.alloc(0);
/** Lets go of the input (the reader's buffer would keep a frame, a page or a whole chunk alive). */
export function release<T>(value: T): T {
  buf = EMPTY;
  origin = 0;
  return value;
}

/** The reader's state, to read something else in between (a lazy member read while another object decodes). */
export function save(): { readonly buf: Buffer; readonly pos: number; readonly origin: number } {
  return { buf, pos, origin };
}

export function restore(saved: { readonly buf: Buffer; readonly pos: number; readonly origin: number }): void {
  buf = saved.buf;
  pos = saved.pos;
  origin = saved.origin;
}

export function fail(what: string): never {
  throw new ProtobufError(`protobuf: ${what} at byte ${pos + origin}`);
}

/** The fault of a length past the end of its message, `left` bytes before that end (also for a body cut short). */
export function failPastEnd(length: number, left: number): never {
  return fail(`length ${length} past the end of its message (${left} bytes left)`);
}

export function hasMagic(start: number, end: number): boolean {
  return (
    end - start >= 4 && buf[start] === MAGIC[0] && buf[start + 1] === MAGIC[1] && buf[start + 2] === MAGIC[2] && buf[start + 3] === MAGIC[3]
  );
}

export function varint(end: number): number {
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
    // The 10th byte holds bit 63 alone: more is past 64 bits (Go's protowire: an overflow).
    if (i === 9 && b > 1) fail('varint overflows 64 bits');
    result += (b & 0x7f) * factor;
    if (b < 0x80) return result;
    factor *= 128;
  }
  return fail('varint over 10 bytes');
}

/** A varint as a signed 64-bit integer (two's complement, as int64 and negative int32 are written). */
export function int64(end: number): number {
  const start = pos;
  const v = varint(end);
  const length = pos - start;
  if (length < 10 && v <= Number.MAX_SAFE_INTEGER) return v;
  // Negative, or past 2^53: from its exact low and high 32 bits, rounded once, as JSON.parse rounds the decimal
  // (varint's running sum rounds at each step past 2^53, and can land on another double).
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < length; i++) {
    const b = buf[start + i]! & 0x7f;
    if (i < 4) lo |= b << (7 * i);
    else if (i === 4) {
      lo |= (b & 0x0f) << 28;
      hi |= b >> 4;
    } else hi |= b << (7 * i - 32);
  }
  return (hi | 0) * 2 ** 32 + (lo >>> 0);
}

/** A varint as int32 as Go reads it (`int32(x)`): its low 32 bits, signed. */
export function int32(end: number): number {
  const start = pos;
  const v = varint(end);
  if (pos - start < 10 && v <= Number.MAX_SAFE_INTEGER) return v | 0;
  let lo = 0;
  for (let i = 0; i < 5; i++) lo |= (buf[start + i]! & 0x7f) << (7 * i);
  return lo | 0;
}

/** Reads a length and returns where its bytes end, checked against `end` (the enclosing message's end). */
export function lengthEnd(end: number): number {
  const length = varint(end);
  if (length > end - pos) failPastEnd(length, end - pos);
  return pos + length;
}

export function skip(wireType: number, end: number): void {
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

export function latin1(bytes: Buffer, start: number, end: number): string {
  return (bytes as unknown as Slicers).latin1Slice(start, end);
}

/**
 * UTF-8 bytes as a flat string. Short ASCII strings come from a small cache, checked byte for byte: most of an
 * object's strings recur (enum values, label keys, images, node names), and one shared copy is cheaper to make and
 * to hold than one per object. The cache's slot is a hash of the length and of at most eight bytes (the first and
 * last four), so that a hit reads the bytes once, in the comparison, which also tells they are ASCII (a cached string
 * is). Other strings are read by {@link utf8}.
 */
const CACHE_SIZE = 4096;
const cachedStrings: string[] = new Array<string>(CACHE_SIZE).fill('');
export function str(start: number, end: number): string {
  const length = end - start;
  if (length > 32 || length === 0) return length === 0 ? '' : utf8(start, end);
  let hash = Math.imul(length ^ buf[start]!, 0x01000193);
  if (length > 1) {
    hash = Math.imul(hash ^ buf[end - 1]!, 0x01000193);
    if (length > 2) {
      hash = Math.imul(hash ^ buf[start + 1]!, 0x01000193);
      hash = Math.imul(hash ^ buf[end - 2]!, 0x01000193);
      if (length > 4) {
        hash = Math.imul(hash ^ buf[start + 2]!, 0x01000193);
        hash = Math.imul(hash ^ buf[end - 3]!, 0x01000193);
        hash = Math.imul(hash ^ buf[start + 3]!, 0x01000193);
        hash = Math.imul(hash ^ buf[end - 4]!, 0x01000193);
      }
    }
  }
  const slot = (hash ^ (hash >>> 15)) & (CACHE_SIZE - 1);
  const cached = cachedStrings[slot]!;
  if (cached.length === length && sameBytes(cached, start)) return cached;
  for (let i = start; i < end; i++) if (buf[i]! >= 0x80) return utf8(start, end);
  const fresh = latin1(buf, start, end);
  cachedStrings[slot] = fresh;
  return fresh;
}

/**
 * The bytes from `start` to `end` as the string a Kubernetes API server's JSON holds for them: Go's encoding/json
 * writes one U+FFFD for each byte that does not begin a valid UTF-8 sequence (utf8.DecodeRune's size 1), where
 * Node's decoder writes one per maximal subpart (WHATWG: a truncated 3-byte sequence is one U+FFFD, two in Go).
 * Valid bytes cost what Node's slice costs, and a length check (every byte one character: nothing to mend, Node and
 * Go agree) or a search for U+FFFD (absent from valid text but for the character itself, which the slow path keeps).
 */
export function utf8(start: number, end: number): string {
  const s = (buf as unknown as Slicers).utf8Slice(start, end);
  return s.length === end - start || s.indexOf('\uFFFD') === -1 ? s : goUtf8(start, end);
}

function goUtf8(start: number, end: number): string {
  const parts: string[] = [];
  let run = start;
  for (let i = start; i < end;) {
    const n = validSequence(i, end);
    if (n > 0) i += n;
    else {
      parts.push((buf as unknown as Slicers).utf8Slice(run, i), '\uFFFD');
      run = ++i;
    }
  }
  parts.push((buf as unknown as Slicers).utf8Slice(run, end));
  return parts.join('');
}

/** The length of the valid UTF-8 sequence at `i` (before `end`), or 0: Go's first-byte table and accept ranges. */
function validSequence(i: number, end: number): number {
  const lead = buf[i]!;
  if (lead < 0x80) return 1;
  if (lead < 0xc2 || lead > 0xf4) return 0; // continuation bytes, overlong C0/C1, past U+10FFFF and 5/6-byte leads
  const n = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  if (end - i < n) return 0;
  const second = buf[i + 1]!;
  const lo = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80; // overlong 3- and 4-byte forms
  const hi = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf; // surrogates, past U+10FFFF
  if (second < lo || second > hi) return 0;
  for (let k = 2; k < n; k++) if ((buf[i + k]! & 0xc0) !== 0x80) return 0;
  return n;
}

function sameBytes(cached: string, start: number): boolean {
  for (let i = 0; i < cached.length; i++) if (cached.charCodeAt(i) !== buf[start + i]) return false;
  return true;
}

/** A length-delimited string field's value (its tag read). */
export function stringValue(end: number): string {
  const e = lengthEnd(end);
  const s = str(pos, e);
  pos = e;
  return s;
}

/**
 * A length-delimited string field's value (its tag read), sliced fresh, without the cache of {@link str}: for
 * strings that rarely recur (an object's name, its resourceVersion), which would only evict the ones that do.
 */
export function uniqueStringValue(end: number): string {
  const e = lengthEnd(end);
  const s = e === pos ? '' : utf8(pos, e);
  pos = e;
  return s;
}
