/**
 * Kubernetes messages decoded into the JSON shape users get from the API server's JSON (issue #36): Quantity and
 * IntOrString as strings (or numbers), Time as RFC 3339, maps as objects, bytes as base64, FieldsV1 as the JSON
 * object its raw bytes hold, and what Go's encoding/json emits for absent fields (`creationTimestamp: null`).
 * Walks the schema of schema.ts; unknown fields are skipped by wire type.
 *
 * check.ts's `checkMessage` walks a message without building it, checking everything a decode could trip on: what it
 * accepts, {@link decodeInto} decodes without an error (the rule that lets lazy members be read later).
 */
import { K, type Field, type Message } from './schema.ts';
import { buf, fail, int32, int64, latin1, lengthEnd, pos, seek, skip, str, stringValue, varint } from './wire.ts';

/** Seconds of 0001-01-01T00:00:00Z and of 9999-12-31T23:59:59Z: the times RFC 3339 can write. */
const MIN_SECONDS = -62_135_596_800;
const MAX_SECONDS = 253_402_300_799;

let seconds = 0;
let nanos = 0;
/** A Timestamp-shaped message's seconds and nanos (into this module's `seconds` and `nanos`), checked in range. */
export function readTime(end: number): void {
  seconds = 0;
  nanos = 0;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) seconds = int64(end);
    else if (tag === 0x10) nanos = int64(end);
    else skip(tag & 7, end);
  }
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || nanos < 0 || nanos > 999_999_999) fail(`a time out of range (${seconds} s)`);
}

const timeText = Buffer.alloc(32);
function digits(at: number, n: number, width: number): void {
  for (let i = at + width - 1; i >= at; i--) {
    timeText[i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
}

/**
 * The RFC 3339 text of recent seconds values (a Time's whole string, to `Z`), by a slot of the seconds: an object's
 * times recur across its events and its neighbours' (creation, start, a condition's last change), so most are one
 * comparison instead of a `Date` and 20 digits written. A slot holds the last seconds value written to it.
 */
const TIME_SLOTS = 1024;
const cachedSeconds = new Float64Array(TIME_SLOTS).fill(NaN);
const cachedTimes = new Array<string>(TIME_SLOTS).fill('');

/**
 * `seconds` (checked in range) as `YYYY-MM-DDTHH:MM:SSZ`, the text of timeText's first 20 bytes too. A miss computes the
 * civil date from the day number by integer arithmetic (H. Hinnant's `civil_from_days`, proleptic Gregorian as `Date`'s)
 * rather than through a `Date` and six getters: a sync of a large cluster misses on nearly every object (creation times
 * are one per object, ~3× the cost of the arithmetic measured; docs/performance.md, #36 on 2026-11-28).
 */
function secondsText(): string {
  const slot = seconds & (TIME_SLOTS - 1);
  if (cachedSeconds[slot] === seconds) return cachedTimes[slot]!;
  const day = Math.floor(seconds / 86_400);
  const time = seconds - day * 86_400;
  // Days since 0000-03-01 in eras of 400 years (146,097 days each); March first, so that a leap day ends its year.
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1_460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const m = Math.floor((5 * dayOfYear + 2) / 153);
  const month = m < 10 ? m + 3 : m - 9;
  digits(0, yearOfEra + era * 400 + (month <= 2 ? 1 : 0), 4);
  timeText[4] = 0x2d;
  two(5, month);
  timeText[7] = 0x2d;
  two(8, dayOfYear - Math.floor((153 * m + 2) / 5) + 1);
  timeText[10] = 0x54;
  const hours = Math.floor(time / 3_600);
  const minutes = Math.floor((time - hours * 3_600) / 60);
  two(11, hours);
  timeText[13] = 0x3a;
  two(14, minutes);
  timeText[16] = 0x3a;
  two(17, time - hours * 3_600 - minutes * 60);
  timeText[19] = 0x5a;
  const text = latin1(timeText, 0, 20);
  cachedSeconds[slot] = seconds;
  cachedTimes[slot] = text;
  return text;
}

/** `n` (0–99) as two digits at `at` of timeText. */
function two(at: number, n: number): void {
  const tens = Math.floor(n / 10);
  timeText[at] = 0x30 + tens;
  timeText[at + 1] = 0x30 + n - tens * 10;
}

/** A Timestamp-shaped message (seconds 1, nanos 2) as the JSON of metav1.Time or MicroTime. */
export function timestamp(end: number, micro: boolean): string | null {
  if (pos === end) return null;
  readTime(end);
  const whole = secondsText();
  if (!micro) return whole;
  // MicroTime: the seconds' text, then `.` and six digits of microseconds.
  for (let i = 0; i < 19; i++) timeText[i] = whole.charCodeAt(i);
  timeText[19] = 0x2e;
  digits(20, Math.floor(nanos / 1000), 6);
  timeText[26] = 0x5a;
  return latin1(timeText, 0, 27);
}

function quantity(end: number): string {
  let s = '';
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) s = stringValue(end);
    else skip(tag & 7, end);
  }
  return s === '' ? '0' : s;
}

/** An IntOrString: its intVal an int32, as Go reads it. */
function intOrString(end: number): string | number {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) type = varint(end);
    else if (tag === 0x10) intVal = int32(end);
    else if (tag === 0x1a) strVal = stringValue(end);
    else skip(tag & 7, end);
  }
  return type === 1 ? strVal : intVal;
}

/** A message whose field 1 is `raw` JSON bytes (FieldsV1, RawExtension): its value (check.ts checked it). */
function rawField(end: number): unknown {
  let value: unknown = null;
  while (pos < end) {
    const tag = varint(end);
    if (tag !== 0x0a) {
      skip(tag & 7, end);
      continue;
    }
    const e = lengthEnd(end);
    value = e === pos ? null : JSON.parse(buf.toString('utf8', pos, e));
    seek(e);
  }
  return value;
}

function duration(end: number): string {
  let nanos = 0;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) nanos = int64(end);
    else skip(tag & 7, end);
  }
  // Go's time.Duration.String for whole seconds.
  const s = Math.round(nanos / 1e9);
  if (s === 0) return '0s';
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${m}m${s % 60}s` : m > 0 ? `${m}m${s % 60}s` : `${s}s`;
}

/** One value of a length-delimited field of `f`'s kind ending at `end` (pos at its first byte). */
export function lengthDelimited(f: Field, end: number): unknown {
  switch (f.kind) {
    case K.string:
      return str(pos, end);
    case K.bytes:
      return buf.toString('base64', pos, end);
    case K.msg:
      return decodeInto({}, end, f.msg!);
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
    if (f.kind === K.int64) return int64(end);
    if (f.kind === K.int32) return int32(end);
    if (f.kind === K.bool) return varint(end) !== 0;
  } else if (wireType === 1 && f.kind === K.double) {
    if (end - pos < 8) fail('truncated double');
    const v = buf.readDoubleLE(pos);
    seek(pos + 8);
    return v;
  }
  return fail(`field ${f.json}: wire type ${wireType}`);
}

/** One value of field `f` in wire type `wireType` (its tag read). */
export function one(f: Field, wireType: number, end: number): unknown {
  if (wireType !== 2) return scalar(f, wireType, end);
  const e = lengthEnd(end);
  const value = lengthDelimited(f, e);
  seek(e);
  return value;
}

/** A map entry (key 1, value 2) into `target[f.json]`. */
function mapEntry(target: Record<string, unknown>, f: Field, end: number): void {
  let key = '';
  let value: unknown = undefined;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) key = stringValue(end);
    else if (tag >>> 3 === 2) value = one(f, tag & 7, end);
    else skip(tag & 7, end);
  }
  if (value === undefined) value = defaultOf(f, true);
  const map = (target[f.json] ??= {}) as Record<string, unknown>;
  // An own `__proto__`, as JSON.parse makes (an assignment would set the prototype, or drop a string).
  if (key === '__proto__') Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  else map[key] = value;
}

/** One occurrence of field `f` (its tag read) into `target`. */
export function field(target: Record<string, unknown>, f: Field, wireType: number, end: number): void {
  if (f.map) {
    if (wireType !== 2) fail(`map ${f.json}: wire type ${wireType}`);
    mapEntry(target, f, lengthEnd(end));
  } else if (f.rep) {
    const list = target[f.json] as unknown[] | undefined;
    if (wireType === 2 && f.kind >= K.int32 && f.kind <= K.double) {
      const e = lengthEnd(end);
      const into = list ?? (target[f.json] = []);
      while (pos < e) into.push(scalar(f, f.kind === K.double ? 1 : 0, e));
    } else if (list === undefined) {
      // A list's first element as a literal: room for one, where `[]` and a push make room for 17 (most lists of an
      // object hold one to three: ownerReferences, containers, ports), 128 bytes each object keeps.
      const value = one(f, wireType, end);
      target[f.json] = [value];
    } else list.push(one(f, wireType, end));
  } else if (f.inline) {
    if (wireType !== 2) fail(`inline ${f.json}: wire type ${wireType}`);
    // Its members go to `target` among its message's: that message's decode puts them in order and adds their defaults.
    if (decodeFields(target, lengthEnd(end), f.msg!) === DISORDERED) inlineDisorder = true;
  } else {
    // A singular message a second time: refused, as check.ts's walk refuses it (Go would merge the two; see `twice` there).
    if (f.kind >= K.msg && wireType === 2 && target[f.json] !== undefined) fail(`field ${f.json}: a singular message twice`);
    const value = one(f, wireType, end);
    if (f.presence !== 'omit' || !(value === '' || value === 0 || value === false)) target[f.json] = value;
    // Go assigns every occurrence, a zero too (gogo's `m.Generation = 0`, then its varint): the last wins, and
    // `omitempty` leaves that zero out, so an earlier value given again as zero is gone.
    else if (target[f.json] !== undefined) delete target[f.json];
  }
}

/**
 * Decodes the fields of `msg` from pos to `end` into `target` (absent `always` fields get their defaults) and returns
 * the object, its keys in the order the API server's JSON writes them (`msg.order`, after the keys `target` held
 * before): `target` itself when the wire gave them in that order, else a new object (see {@link inOrder}).
 */
export function decodeInto(target: Record<string, unknown>, end: number, msg: Message): Record<string, unknown> {
  return fillAlways(target, msg, undefined, decodeFields(target, end, msg)) === DISORDERED ? inOrder(target, msg, undefined) : target;
}

/** What {@link decodeFields} and {@link fillAlways} answer when a key may have gone after one that follows it in JSON order. */
export const DISORDERED = -2;

/** Set by an inline field's decode whose members came out of order (see {@link decodeFields}). */
let inlineDisorder = false;

/**
 * The fields of `msg` from pos to `end` into `target`, as the wire gives them: the highest rank (`msg.order`'s index) of
 * the keys written (-1: none), or {@link DISORDERED}: a server writes fields by number, and Go's struct order, JSON's,
 * is not that (Container's terminationMessagePolicy is field 20, between 13 and 14). One comparison a field: the order is
 * fixed ({@link inOrder}) only for the objects that need it.
 */
function decodeFields(target: Record<string, unknown>, end: number, msg: Message): number {
  let last = -1;
  let disordered = false;
  while (pos < end) {
    const tag = varint(end);
    const f = msg.byNumber[tag >>> 3];
    if (f === undefined) {
      skip(tag & 7, end);
      continue;
    }
    if (f.inline) {
      const outer = inlineDisorder;
      inlineDisorder = false;
      field(target, f, tag & 7, end);
      if (inlineDisorder || f.rank < last) disordered = true;
      else last = f.rankEnd;
      inlineDisorder = outer;
    } else if (f.rank < last) {
      field(target, f, tag & 7, end);
      // Out of order when written (an `omitempty` zero is not).
      if (target[f.json] !== undefined) disordered = true;
    } else {
      last = f.rankEnd;
      field(target, f, tag & 7, end);
    }
  }
  return disordered ? DISORDERED : last;
}

/**
 * The `always` fields of `msg` that `target` lacks (but `lazy` ones), with their defaults (at the end). Given the
 * highest rank of the keys written so far (-1: none; {@link DISORDERED}), returns it after the defaults, or DISORDERED
 * when one went after a key that follows it in JSON order.
 */
export function fillAlways(target: Record<string, unknown>, msg: Message, lazy: readonly string[] | undefined, last = -1): number {
  for (const f of msg.always)
    if (target[f.json] === undefined && !lazy?.includes(f.json)) {
      target[f.json] = defaultOf(f, false);
      if (last === DISORDERED) continue;
      const rank = msg.rank.get(f.json)!;
      last = rank < last ? DISORDERED : rank;
    }
  return last;
}

/** A lazy member's place in {@link inOrder}'s slots. */
const LAZY = Symbol('lazy');

/**
 * A new object with `from`'s keys in JSON order (`msg.order`), after those that are not `msg`'s members (`kind` and
 * `apiVersion`, written first), and the `lazy` members (not in `from`) defined in their places by `define`. A new
 * object, not `from` reordered: deleting a property turns a V8 object into a dictionary (slower to read, larger).
 */
export function inOrder(
  from: Record<string, unknown>,
  msg: Message,
  lazy: { readonly keys: readonly string[]; readonly define: (target: object, key: string) => void } | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const slots = new Array<unknown>(msg.order.length);
  for (const key of Object.keys(from)) {
    const rank = msg.rank.get(key);
    if (rank !== undefined) slots[rank] = from[key];
    else out[key] = from[key];
  }
  if (lazy !== undefined) for (const key of lazy.keys) slots[msg.rank.get(key)!] = LAZY;
  for (let rank = 0; rank < slots.length; rank++) {
    const value = slots[rank];
    if (value === LAZY) lazy!.define(out, msg.order[rank]!);
    else if (value !== undefined) out[msg.order[rank]!] = value;
  }
  return out;
}

/** What encoding/json emits for an absent value (for a map's value: the Go zero value). */
export function defaultOf(f: Field, mapValue: boolean): unknown {
  if ((f.rep || f.map) && !mapValue) return f.json === 'items' ? [] : null;
  switch (f.kind) {
    case K.string:
    case K.bytes:
      return '';
    case K.int32:
    case K.int64:
    case K.double:
    case K.intOrString:
      return 0;
    case K.bool:
      return false;
    case K.msg: {
      const target: Record<string, unknown> = {};
      fillAlways(target, f.msg!, undefined);
      return target;
    }
    case K.quantity:
      return '0';
    case K.duration:
      return '0s';
    default:
      return null;
  }
}
