/**
 * Issue #36: what the check walk's test of FieldsV1 costs per pod, in process: the bench workload's managedFields
 * (bench/workload/pods.ts: two entries a pod, ~1.1 KB of FieldsV1 JSON together), each entry's JSON bytes in one
 * buffer with a protobuf byte between them (as in a frame: the test must stop at its end, not at the buffer's), timed
 * two ways in one process, alternately, round after round (the first round warms up):
 *
 *   scanner   the lazy JSON scanner's syntax check (jsonScanner.ts's `valueEnd` on a view of the bytes, in a `try`),
 *             what the walk did before rawJson.ts
 *   rawJson   a checker written for this one question (tried, not kept: no faster), below: in place in the buffer
 *             (no view, no exception), the end checked at each token, strings read by a loop of their own
 *   parse     `JSON.parse` of the bytes' text, as the decode reads them (what the native parser would cost as a check)
 *   floor     one loop over every byte looking each up in a table of 256 (less than any checker can do in JavaScript)
 *
 * Main-thread CPU µs per pod and ns per byte, medians of the rounds.
 *
 *   node bench/micro/pbRawJson.ts [pods=20000] [rounds=9]
 */
import { skipSpace, valueEnd as scannerValueEnd } from '../../src/1-transport/jsonScanner.ts';
import { makePod } from '../workload/pods.ts';

// The checker tried (`rawJson`): the lazy JSON scanner's rules written again for the one question the walk asks.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The open containers of the value being checked, innermost last: 1 for an object, 0 for an array (grows as needed). */
let containers = new Uint8Array(64);

/** JSON's four spaces (a byte past the buffer, undefined, is none). */
function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function spaceEnd(b: Uint8Array, j: number, end: number): number {
  while (j < end && isSpace(b[j])) j++;
  return j;
}

/**
 * How `b` from `start` to `end` reads as JSON: 0 when it is one value (spaces around it allowed), 1 when it is not
 * JSON (a syntax fault, or only spaces), 2 when one value ends before other bytes that are not spaces.
 */
function jsonVerdict(b: Uint8Array, start: number, end: number): 0 | 1 | 2 {
  const stop = valueEnd(b, spaceEnd(b, start, end), end);
  if (stop < 0) return 1;
  return spaceEnd(b, stop, end) === end ? 0 : 2;
}

/** The index after the JSON value at `i` (no leading space) that ends by `end`, or -1 when there is none. */
function valueEnd(b: Uint8Array, i: number, end: number): number {
  let depth = 0;
  let j = i;
  for (;;) {
    // A value starts at j.
    if (j >= end) return -1;
    const c = b[j]!;
    if (c === QUOTE) j = stringEnd(b, j + 1, end);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      j = spaceEnd(b, j + 1, end);
      // `}` is `{` + 2, as `]` is `[` + 2.
      if (j < end && b[j] === c + 2) j++;
      else {
        if (depth === containers.length) {
          const grown = new Uint8Array(depth * 2);
          grown.set(containers);
          containers = grown;
        }
        if (c === OPEN_BRACE) {
          containers[depth++] = 1;
          j = memberValueStart(b, j, end);
          if (j < 0) return -1;
        } else containers[depth++] = 0;
        continue;
      }
    } else j = scalarEnd(b, j, c, end);
    if (j < 0) return -1;
    // A value ended at j: close containers, or go on to the next member or element.
    for (;;) {
      if (depth === 0) return j;
      j = spaceEnd(b, j, end);
      if (j >= end) return -1;
      const inObject = containers[depth - 1] === 1;
      const e = b[j];
      if (e === COMMA) {
        j = spaceEnd(b, j + 1, end);
        if (inObject) {
          j = memberValueStart(b, j, end);
          if (j < 0) return -1;
        }
        break;
      }
      if (e !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return -1;
      depth--;
      j++;
    }
  }
}

/** At a member's key (`j`): `"key" :`; where its value starts (spaces skipped), or -1. */
function memberValueStart(b: Uint8Array, j: number, end: number): number {
  if (j >= end || b[j] !== QUOTE) return -1;
  j = stringEnd(b, j + 1, end);
  if (j < 0) return -1;
  j = spaceEnd(b, j, end);
  if (j >= end || b[j] !== COLON) return -1;
  return spaceEnd(b, j + 1, end);
}

/**
 * The index after the string whose first byte after the opening quote is at `j`, or -1: no raw control character,
 * only JSON's escapes, the closing quote before `end`. Any other byte is taken as it is (invalid UTF-8 decodes to
 * U+FFFD, which `JSON.parse` takes in a string).
 */
function stringEnd(b: Uint8Array, j: number, end: number): number {
  for (;;) {
    while (j < end && PLAIN[b[j]!] === 1) j++;
    if (j >= end) return -1;
    const c = b[j]!;
    if (c === QUOTE) return j + 1;
    if (c !== BACKSLASH) return -1;
    j = escapeEnd(b, j, end);
    if (j === 0) return -1;
  }
}

/** By byte: 1 for a byte a string takes as it is (not a quote, a backslash or a control character). */
const PLAIN = new Uint8Array(256).fill(1, 0x20);
PLAIN[QUOTE] = 0;
PLAIN[BACKSLASH] = 0;

/** The index after the escape whose backslash is at `j`, or 0 (not an escape of JSON's, or past `end`). */
function escapeEnd(b: Uint8Array, j: number, end: number): number {
  if (j + 1 >= end) return 0;
  const e = b[j + 1];
  if (e === 0x75 /* u */) return j + 5 < end && isHex(b[j + 2]!) && isHex(b[j + 3]!) && isHex(b[j + 4]!) && isHex(b[j + 5]!) ? j + 6 : 0;
  return e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74 ? j + 2 : 0;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}

function isDigit(b: Uint8Array, j: number, end: number): boolean {
  if (j >= end) return false;
  const c = b[j]!;
  return c >= 0x30 && c <= 0x39;
}

/** The index after a scalar (number, true, false, null) at `i`, whose first byte is `c`, or -1. */
function scalarEnd(b: Uint8Array, i: number, c: number, end: number): number {
  if (c === 0x74) return literalEnd(b, i, end, 'true');
  if (c === 0x66) return literalEnd(b, i, end, 'false');
  if (c === 0x6e) return literalEnd(b, i, end, 'null');
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return numberEnd(b, i, end);
  return -1;
}

function literalEnd(b: Uint8Array, i: number, end: number, word: string): number {
  if (end - i < word.length) return -1;
  for (let k = 1; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

/** The index after the number at `i`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, or -1. */
function numberEnd(b: Uint8Array, i: number, end: number): number {
  let j = i;
  if (b[j] === 0x2d) j++;
  if (j < end && b[j] === 0x30) j++;
  else if (isDigit(b, j, end)) while (isDigit(b, j, end)) j++;
  else return -1;
  if (j < end && b[j] === 0x2e) {
    j++;
    if (!isDigit(b, j, end)) return -1;
    while (isDigit(b, j, end)) j++;
  }
  if (j < end && (b[j] === 0x65 || b[j] === 0x45)) {
    j++;
    if (j < end && (b[j] === 0x2b || b[j] === 0x2d)) j++;
    if (!isDigit(b, j, end)) return -1;
    while (isDigit(b, j, end)) j++;
  }
  return j;
}

const [podsArg = '20000', roundsArg = '9'] = process.argv.slice(2);
const PODS = Number(podsArg);
const ROUNDS = Number(roundsArg);

const parts: Buffer[] = [];
const ranges: number[] = [];
let at = 0;
for (let i = 0; i < PODS; i++) {
  const pod = makePod({ index: i, resourceVersion: 1000 + i, revision: i % 5 }) as { metadata: { managedFields: { fieldsV1: unknown }[] } };
  for (const entry of pod.metadata.managedFields) {
    const json = Buffer.from(JSON.stringify(entry.fieldsV1));
    parts.push(json, Buffer.from([0x12]));
    ranges.push(at, at + json.length);
    at += json.length + 1;
  }
}
const buf = Buffer.concat(parts);
const bytes = buf.length - ranges.length / 2;

function scanner(): number {
  let ok = 0;
  for (let r = 0; r < ranges.length; r += 2) {
    const view = buf.subarray(ranges[r], ranges[r + 1]);
    try {
      if (skipSpace(view, scannerValueEnd(view, skipSpace(view, 0))) === view.length) ok++;
    } catch {
      // not JSON
    }
  }
  return ok;
}

function rawJson(): number {
  let ok = 0;
  for (let r = 0; r < ranges.length; r += 2) if (jsonVerdict(buf, ranges[r]!, ranges[r + 1]!) === 0) ok++;
  return ok;
}

/** `JSON.parse` of the text, as the decode reads it (what a check by the native parser would cost). */
function parse(): number {
  let ok = 0;
  for (let r = 0; r < ranges.length; r += 2) {
    try {
      JSON.parse(buf.toString('latin1', ranges[r], ranges[r + 1]));
      ok++;
    } catch {
      // not JSON
    }
  }
  return ok;
}

const threadCpu = () => {
  const t = (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return t.user + t.system;
};
function floor(): number {
  let stops = 0;
  for (let j = 0; j < buf.length; j++) if (PLAIN[buf[j]!] === 0) stops++;
  return stops > 0 ? ranges.length / 2 : 0;
}

const ways = { scanner, rawJson, parse, floor };
const samples: Record<string, number[]> = { scanner: [], rawJson: [], parse: [], floor: [] };
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, way] of round % 2 === 0 ? Object.entries(ways) : Object.entries(ways).reverse()) {
    const t0 = threadCpu();
    const ok = way();
    const us = threadCpu() - t0;
    if (ok !== ranges.length / 2) throw new Error(`${name}: ${ok} of ${ranges.length / 2} accepted`);
    if (round > 0) samples[name]!.push(us);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const row = Object.fromEntries(
  Object.entries(samples).map(([name, xs]) => [
    name,
    { usPerPod: Number((median(xs) / PODS).toFixed(3)), nsPerByte: Number(((median(xs) * 1000) / bytes).toFixed(3)) },
  ]),
);
console.log(JSON.stringify({ pods: PODS, bytesPerPod: Math.round(bytes / PODS), ...row }));
