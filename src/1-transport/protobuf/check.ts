/**
 * The never-a-wrong-object walk (issue #36): a kept object is walked whole on arrival without building it, checking
 * everything a decode could trip on, so that its lazy members (lazy.ts) never fail and never differ when read. What
 * {@link checkMessage} accepts, `decodeInto` (values.ts) decodes without an error.
 *
 * It checks every length within its enclosing message, every known field in its wire type (a packed list's varints
 * each ending within it, its doubles 8 bytes each), nested messages (map entries, times, quantities) likewise, times in
 * range (values.ts's `readTime`, as their decode) and raw JSON (FieldsV1, RawExtension) one JSON value. Strings and
 * bytes are skipped by length: a decode never fails on them (invalid UTF-8 becomes U+FFFD, as Go writes it).
 *
 * The walk is specialised per message, once, from the schema: a table by tag (field number and wire type together)
 * of what to do, so that a field costs one varint and one table read; a tag the table does not hold (an unknown
 * field) is skipped by its wire type.
 */
import { CLOSE_BRACE, COLON, COMMA, MAX_DEPTH, OPEN_BRACE, QUOTE, skipSpace, valueEnd } from '../jsonScanner.ts';
import { K, type Field, type Message } from './schema.ts';
import { readTime } from './values.ts';
import { buf, fail, hasMagic, lengthEnd, pos, seek, skip, varint } from './wire.ts';

const BACKSLASH = 0x5c;

/** What the walk does with a tag (field number and wire type). */
const Do = {
  /** An unknown field, or a map entry's other fields: skipped by its wire type. */
  Skip: 0,
  /** A known varint (int32, int64, bool), or a length-delimited scalar (string, bytes): skipped, nothing to check. */
  Varint: 1,
  Fixed64: 2,
  Bytes: 3,
  /** A nested message (a struct; a quantity, an IntOrString or a duration, whose fields are all skipped). */
  Message: 4,
  Time: 5,
  /** FieldsV1 or RawExtension: field 1 must be one JSON value. */
  Raw: 6,
  /** A map entry of the field (key 1, value 2). */
  Entry: 7,
  PackedVarints: 8,
  PackedDoubles: 9,
  /** A known field in a wire type it is never read in. */
  WrongWireType: 10,
  /** A map entry's key (1) in another wire type than 2; its value (2) in another than the value's. */
  WrongKey: 11,
  WrongValue: 12,
} as const;
type Do = (typeof Do)[keyof typeof Do];

interface Walk {
  /** What to do, by tag (`tag >>> 0`); a tag past its end is an unknown field's. */
  readonly actions: Uint8Array;
  /** By tag: the walk of a nested message or map entry. */
  readonly next: (Walk | undefined)[];
  /** By tag: the field (its JSON name, for a fault). */
  readonly fields: (Field | undefined)[];
  /** A map entry's walk, whose key is told by the whole tag (see {@link actionOf64}). */
  readonly entry: boolean;
  /** By tag (wire type 2): the bit of a singular message field, which a message may hold once (see {@link twice}). */
  readonly once: Int32Array;
}

/** A field's values' wire type (a packed list aside). */
function wireTypeOf(f: Field): number {
  if (f.map) return 2;
  if (f.kind === K.int32 || f.kind === K.int64 || f.kind === K.bool) return 0;
  return f.kind === K.double ? 1 : 2;
}

const walks = new Map<Message, Walk>();
/** Quantities, IntOrStrings and durations: every field skipped by its wire type. */
const OPAQUE: Walk = { actions: new Uint8Array(0), next: [], fields: [], entry: false, once: new Int32Array(0) };

function walkOf(msg: Message | undefined): Walk {
  if (msg === undefined) return OPAQUE;
  let walk = walks.get(msg);
  if (walk !== undefined) return walk;
  const size = 8 * (msg.byNumber.length + 1);
  walk = {
    actions: new Uint8Array(size),
    next: new Array<Walk | undefined>(size),
    fields: new Array<Field | undefined>(size),
    entry: false,
    once: new Int32Array(size),
  };
  walks.set(msg, walk); // before its fields: a message may hold itself (JSONSchemaProps-like recursion)
  let bits = 0;
  for (const f of msg.fields)
    if (!f.rep && !f.map && f.kind >= K.msg) {
      // 31 at most: a bit each in walk()'s local `seen` (the schema's most is VolumeSource's 29).
      if (bits === 31) throw new Error(`schema: ${msg.name} has more than 31 singular message fields`);
      walk.once[f.n * 8 + 2] = 1 << bits++;
    }
  for (const f of msg.fields)
    for (let wireType = 0; wireType < 8; wireType++) {
      const tag = f.n * 8 + wireType;
      walk.fields[tag] = f;
      walk.actions[tag] = actionOf(f, wireType);
      if (walk.actions[tag] === Do.Message) walk.next[tag] = walkOf(f.kind === K.msg ? f.msg : undefined);
      else if (walk.actions[tag] === Do.Entry) walk.next[tag] = entryWalk(f);
    }
  return walk;
}

function actionOf(f: Field, wireType: number): Do {
  const expected = wireTypeOf(f);
  if (f.rep && wireType === 2 && expected !== 2) return expected === 1 ? Do.PackedDoubles : Do.PackedVarints;
  if (wireType !== expected) return Do.WrongWireType;
  if (wireType === 0) return Do.Varint;
  if (wireType === 1) return Do.Fixed64;
  return f.map ? Do.Entry : valueAction(f);
}

/** A length-delimited value of `f`'s kind (a map's value too). */
function valueAction(f: Field): Do {
  if (f.kind === K.msg) return Do.Message;
  if (f.kind === K.time || f.kind === K.microTime) return Do.Time;
  if (f.kind === K.fieldsV1 || f.kind === K.raw) return Do.Raw;
  return f.kind >= K.time ? Do.Message : Do.Bytes;
}

/** A map entry of `f`: key 1 a string (length-delimited), value 2 in the value's wire type, other fields skipped. */
function entryWalk(f: Field): Walk {
  const value: Field = { ...f, map: false, rep: false };
  const walk: Walk = {
    actions: new Uint8Array(24),
    next: new Array<Walk | undefined>(24),
    fields: new Array<Field | undefined>(24).fill(f),
    entry: true,
    // A map entry's value twice is replaced, in Go as here (Go's map decode makes a new value each time).
    once: new Int32Array(24),
  };
  for (let wireType = 0; wireType < 8; wireType++) {
    walk.actions[8 + wireType] = wireType === 2 ? Do.Bytes : Do.WrongKey;
    const expected = wireTypeOf(value);
    const action = wireType !== expected ? Do.WrongValue : wireType === 0 ? Do.Varint : wireType === 1 ? Do.Fixed64 : valueAction(value);
    walk.actions[16 + wireType] = action;
    if (action === Do.Message) walk.next[16 + wireType] = walkOf(value.kind === K.msg ? value.msg : undefined);
  }
  return walk;
}

/**
 * Walks a message of `msg` (undefined: every field unknown) from pos to `end` without building it; throws the
 * `ProtobufError` of the first fault.
 */
export function checkMessage(end: number, msg: Message | undefined): void {
  walk(walkOf(msg), end);
}

/**
 * The walk's loop reads its position in a local (the reader's `pos` is a module variable, a memory cell each access)
 * and takes the common cases in place: a tag of one byte, a known varint of one byte, a string or bytes whose length
 * is one byte and within the message. Anything else (a longer varint, a fault) is read by wire.ts's functions from
 * the same position, which throw the same fault at the same byte.
 */
function walk(w: Walk, end: number): void {
  const actions = w.actions;
  const once = w.once;
  const b = buf;
  let p = pos;
  /** The bits ({@link Walk.once}) of the singular message fields met in this message. */
  let seen = 0;
  while (p < end) {
    let tag = b[p]!;
    let action: Do;
    if (tag < 0x80) {
      p++;
      action = tag < actions.length ? (actions[tag]! as Do) : Do.Skip;
    } else {
      seek(p);
      const whole = varint(end);
      p = pos;
      tag = whole >>> 0;
      action = whole !== tag ? actionOf64(w, tag) : tag < actions.length ? (actions[tag]! as Do) : Do.Skip;
    }
    if (action === Do.Bytes) {
      const length = p < end ? b[p]! : 0x80;
      if (length < 0x80 && length < end - p) p += 1 + length;
      else {
        seek(p);
        p = lengthEnd(end);
      }
    } else if (action === Do.Varint && p < end && b[p]! < 0x80) p++;
    else if (action === Do.Message && p < end && b[p]! < 0x80 && b[p]! < end - p) {
      const bit = once[tag]!;
      if ((seen & bit) !== 0) twice(w, tag, p);
      seen |= bit;
      const e = p + 1 + b[p]!;
      seek(p + 1);
      walk(w.next[tag]!, e);
      p = e;
    } else {
      if (action >= Do.Message && action <= Do.Raw) {
        const bit = once[tag]!;
        if ((seen & bit) !== 0) twice(w, tag, p);
        seen |= bit;
      }
      seek(p);
      if (action === Do.Varint) varint(end);
      else if (action === Do.Skip) skip(tag & 7, end);
      else if (action === Do.Message) {
        const e = lengthEnd(end);
        walk(w.next[tag]!, e);
        seek(e);
      } else nested(w, tag, action, end);
      p = pos;
    }
  }
  seek(p);
}

/**
 * The action of a tag over 32 bits (a varint of 5 bytes or more). A field is told by its low 32 bits, as `tag >>> 3`
 * and `tag & 7` read it, but a map entry's key only by the whole tag (`tag === 0x0a`, as its decode reads it): a
 * longer tag whose low bits are 0x0a is a key of field 1 in wire type 2 that the decode would not take, a fault.
 */
function actionOf64(w: Walk, tag: number): Do {
  const action = tag < w.actions.length ? (w.actions[tag]! as Do) : Do.Skip;
  return w.entry && action === Do.Bytes && tag === 0x0a ? Do.WrongKey : action;
}

/**
 * A singular message field met a second time in one message, at `p` (its length): refused. Go's decode (gogo's generated
 * `Unmarshal`) merges the copies into one struct, field by field, but not every kind alike (a Time or a Quantity is
 * replaced, an IntOrString merged, lists inside appended), where our decoders made the last copy the value; no server
 * writes a field twice, so rather than a second copy of Go's rules, such bytes are a fault (audit22): never an object
 * that differs from Go's.
 */
function twice(w: Walk, tag: number, p: number): never {
  seek(p);
  return fail(`field ${w.fields[tag]!.json}: a singular message twice`);
}

/** The rarer actions, out of the walk's loop. */
function nested(w: Walk, tag: number, action: Do, end: number): void {
  switch (action) {
    case Do.Fixed64:
      return skip(1, end);
    case Do.Time: {
      const e = lengthEnd(end);
      if (pos !== e) readTime(e);
      return seek(e);
    }
    case Do.Raw: {
      const e = lengthEnd(end);
      checkRaw(e);
      return seek(e);
    }
    case Do.Entry: {
      const e = lengthEnd(end);
      walk(w.next[tag]!, e);
      return seek(e);
    }
    case Do.PackedVarints: {
      const e = lengthEnd(end);
      while (pos < e) varint(e);
      return;
    }
    case Do.PackedDoubles: {
      const e = lengthEnd(end);
      if ((e - pos) % 8 !== 0) fail(`packed doubles: ${e - pos} bytes`);
      return seek(e);
    }
    case Do.WrongWireType:
      return fail(`field ${w.fields[tag]!.json}: wire type ${tag & 7}`);
    case Do.WrongKey:
      return fail(`map ${w.fields[tag]!.json}: a key of wire type ${tag & 7}`);
    default:
      return fail(`map ${w.fields[tag]!.json}: a value of wire type ${tag & 7}`);
  }
}

/** A FieldsV1 or RawExtension: each field 1 (raw) one JSON value, other fields skipped. */
function checkRaw(end: number): void {
  while (pos < end) {
    const tag = varint(end);
    if (tag !== 0x0a) {
      skip(tag & 7, end);
      continue;
    }
    const e = lengthEnd(end);
    checkJson(pos, e);
    seek(e);
  }
}

/** Raw bytes that must be one JSON value (never a nested protobuf object: nothing decodes one). */
function checkJson(start: number, end: number): void {
  if (start === end || compactObjects(buf, start, end)) return;
  if (hasMagic(start, end)) fail('a nested protobuf object where JSON was expected');
  const bytes = buf.subarray(start, end);
  let stop: number;
  try {
    stop = skipSpace(bytes, valueEnd(bytes, skipSpace(bytes, 0)));
  } catch {
    return fail('raw bytes that are not JSON');
  }
  if (stop !== bytes.length) fail('raw bytes that are not one JSON value');
}

/**
 * Whether `b` from `start` to `end` is one JSON object whose every value is an object, written without spaces, its
 * strings with no `\u` escape: what a server writes for FieldsV1 (`{"f:metadata":{"f:labels":{".":{}}}}`), checked
 * in one pass with a depth count instead of the general scanner's stack (and without a view of the bytes to give it).
 * False for anything else, valid or not: the general check then gives the verdict. It accepts nothing that check
 * refuses (a subset of JSON; nesting within {@link MAX_DEPTH}, as counted there), so the verdicts are the same.
 */
function compactObjects(b: Buffer, start: number, end: number): boolean {
  let p = start;
  let depth = 0;
  for (;;) {
    // A value starts at p: only an object.
    if (p >= end || b[p] !== OPEN_BRACE || ++depth > MAX_DEPTH) return false;
    p++;
    if (p < end && b[p] === CLOSE_BRACE) p++;
    else {
      p = keyEnd(b, p, end);
      if (p < 0) return false;
      continue;
    }
    // A value ended at p: close objects, or go on to the next member.
    for (;;) {
      if (--depth === 0) return p === end;
      if (p >= end) return false;
      const c = b[p++]!;
      if (c === COMMA) {
        p = keyEnd(b, p, end);
        if (p < 0) return false;
        break;
      }
      if (c !== CLOSE_BRACE) return false;
    }
  }
}

/** Where the value of the member whose key starts at `p` starts (after `"key":`), or -1 past `end` or for anything rarer. */
function keyEnd(b: Buffer, p: number, end: number): number {
  if (p >= end || b[p] !== QUOTE) return -1;
  for (p++; p < end; p++) {
    const c = b[p]!;
    if (c === QUOTE) return p + 1 < end && b[p + 1] === COLON ? p + 2 : -1;
    if (c === BACKSLASH) {
      const e = ++p < end ? b[p]! : 0;
      // JSON's escapes but \u (its four hex digits are the general check's).
      if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1;
    } else if (c < 0x20) return -1;
  }
  return -1;
}
