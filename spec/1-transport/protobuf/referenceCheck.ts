/**
 * The never-a-wrong-object walk as it was before it was specialised per message (src/1-transport/protobuf/values.ts
 * at eaa6569, `checkMessage` and its helpers, copied unchanged but for the time check, which is `timestamp`'s without
 * its formatting): the reference check.spec.ts holds check.ts's walk to, verdict for verdict. Since audit22, a singular
 * message field a second time in one message is a fault (before its length is read), by a set of the fields met.
 */
import { skipSpace, valueEnd } from '../../../src/1-transport/jsonScanner.ts';
import { K, type Field, type Message } from '../../../src/1-transport/protobuf/schema.ts';
import { buf, fail, hasMagic, int64, lengthEnd, pos, seek, skip, varint } from '../../../src/1-transport/protobuf/wire.ts';

const MIN_SECONDS = -62_135_596_800;
const MAX_SECONDS = 253_402_300_799;

function timestamp(end: number): void {
  if (pos === end) return;
  let seconds = 0;
  let nanos = 0;
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x08) seconds = int64(end);
    else if (tag === 0x10) nanos = int64(end);
    else skip(tag & 7, end);
  }
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || nanos < 0 || nanos > 999_999_999) fail(`a time out of range (${seconds} s)`);
}

function rawField(end: number): void {
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

function checkJson(start: number, end: number): void {
  if (start === end) return;
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

function wireTypeOf(f: Field): number {
  if (f.map) return 2;
  if (f.kind === K.int32 || f.kind === K.int64 || f.kind === K.bool) return 0;
  return f.kind === K.double ? 1 : 2;
}

export function referenceCheckMessage(end: number, msg: Message | undefined): void {
  const met = new Set<number>();
  while (pos < end) {
    const tag = varint(end);
    const wireType = tag & 7;
    const f = msg?.byNumber[tag >>> 3];
    if (f === undefined) {
      skip(wireType, end);
      continue;
    }
    if (f.rep && wireType === 2 && wireTypeOf(f) !== 2) {
      checkPacked(wireTypeOf(f), lengthEnd(end));
      continue;
    }
    if (wireType !== wireTypeOf(f)) fail(`field ${f.json}: wire type ${wireType}`);
    if (wireType !== 2) {
      skip(wireType, end);
      continue;
    }
    if (!f.rep && !f.map && f.kind >= K.msg) {
      if (met.has(f.n)) fail(`field ${f.json}: a singular message twice`);
      met.add(f.n);
    }
    const e = lengthEnd(end);
    checkValue(f, e);
    seek(e);
  }
}

function checkPacked(wireType: number, end: number): void {
  if (wireType === 1) {
    if ((end - pos) % 8 !== 0) fail(`packed doubles: ${end - pos} bytes`);
    seek(end);
  } else while (pos < end) varint(end);
}

function checkValue(f: Field, end: number): void {
  if (f.map) checkMapEntry(f, end);
  else if (f.kind === K.msg) referenceCheckMessage(end, f.msg);
  else if (f.kind === K.time || f.kind === K.microTime) timestamp(end);
  else if (f.kind === K.fieldsV1 || f.kind === K.raw) rawField(end);
  else if (f.kind >= K.time) referenceCheckMessage(end, undefined);
}

function checkMapEntry(f: Field, end: number): void {
  while (pos < end) {
    const tag = varint(end);
    const wireType = tag & 7;
    if (tag >>> 3 === 2) {
      if (wireType !== wireTypeOf({ ...f, map: false })) fail(`map ${f.json}: a value of wire type ${wireType}`);
      if (wireType !== 2) skip(wireType, end);
      else {
        const e = lengthEnd(end);
        checkValue({ ...f, map: false, rep: false }, e);
        seek(e);
      }
    } else if (tag === 0x0a || tag >>> 3 !== 1) skip(wireType, end);
    else fail(`map ${f.json}: a key of wire type ${wireType}`);
  }
}
