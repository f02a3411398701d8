/**
 * The JSON scanner of lazy decoding (lazyJson.ts): it finds where each value of a UTF-8 text ends, checking the
 * whole JSON syntax on the way (brackets, strings and their escapes, numbers, literals), and decodes keys and short
 * values. It builds no objects: what becomes of the values is lazyJson.ts's (objects) and lazyList.ts's (lists).
 * Positions in its errors count bytes.
 */
export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/** The text could not be scanned as JSON of the expected shape. */
class LazyJsonError extends Error {
  override readonly name = 'LazyJsonError';
}

export function fail(what: string, at: number): never {
  throw new LazyJsonError(`${what} at position ${at}`);
}

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipSpace(b: Buffer, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/**
 * The index after the string whose opening quote is at `i`, checking it as
 * JSON.parse would: no raw control character, only JSON's escapes.
 */
export function stringEnd(b: Buffer, i: number): number {
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

/**
 * The deepest nesting taken: Go's encoding/json (and so client-go) refuses a text nested deeper than 10,000
 * containers, and an object nested that deep is one `JSON.stringify` or `structuredClone` cannot take (a RangeError).
 * Counted from the outermost container of the text (the watch line's, the list's), as Go counts it.
 */
export const MAX_DEPTH = 10_000;

/** The text nests past {@link MAX_DEPTH}: refused whatever follows (JSON.parse would take it). */
class NestingError extends LazyJsonError {}

function failDepth(at: number): never {
  throw new NestingError(`nesting deeper than ${MAX_DEPTH} at position ${at}`);
}

/** Whether `error` is the scanner's refusal of a text nested past {@link MAX_DEPTH}. */
export function isNestingError(error: unknown): boolean {
  return error instanceof NestingError;
}

/** The open containers of the value being scanned, innermost last: 1 for an object, 0 for an array (grows as needed, to MAX_DEPTH). */
let containers = new Uint8Array(256);

/**
 * The index after the JSON value that starts at `i` (no leading space),
 * checking its whole syntax. Nesting is followed with an explicit stack, so
 * depth costs no recursion; `outer` containers hold the value, and a value nesting
 * past {@link MAX_DEPTH} in all is refused.
 */
export function valueEnd(b: Buffer, i: number, outer = 0): number {
  let d = b[i];
  if (d !== OPEN_BRACE && d !== OPEN_BRACKET) return scalarEnd(b, i);
  let depth = 0;
  const room = MAX_DEPTH - outer;
  let j = i;
  for (;;) {
    // A value starts at j.
    d = b[j];
    if (d === QUOTE) {
      j = stringEnd(b, j);
    } else if (d === OPEN_BRACE || d === OPEN_BRACKET) {
      if (depth >= room) failDepth(j);
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
 * The index after the value at `i` (held by `outer` containers), following its structure only (nesting and
 * strings; nesting past {@link MAX_DEPTH} refused): for text that JSON.parse reads whole right away (the
 * metadata), so its syntax is checked there, once.
 */
function skipValue(b: Buffer, i: number, outer: number): number {
  const length = b.length;
  const c = b[i];
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) return scalarEnd(b, i);
  let depth = outer;
  let j = i;
  while (j < length) {
    const d = b[j];
    if (d === QUOTE) {
      j = stringEnd(b, j);
      continue;
    }
    if (d === OPEN_BRACE || d === OPEN_BRACKET) {
      if (++depth > MAX_DEPTH) failDepth(j);
    } else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === outer) return j + 1;
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
export function text(b: Buffer, start: number, end: number): string {
  return b.toString('utf8', start, end);
}

/** The key whose quotes are at `start` and `end - 1`, unescaped. */
export function keyAt(b: Buffer, start: number, end: number): string {
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
export function valueAt(b: Buffer, start: number, end: number): unknown {
  if (b[start] === QUOTE && end - start >= 2 && b[end - 1] === QUOTE) {
    let j = start + 1;
    while (j < end - 1 && b[j] !== BACKSLASH) j++;
    if (j === end - 1) return shortText(b, start + 1, end - 1);
  }
  return JSON.parse(text(b, start, end));
}

/** Whether the key whose quotes are at `start` and `end - 1` is `name` (an ASCII name). */
export function keyIs(b: Buffer, start: number, end: number, name: string): boolean {
  const length = end - start - 2;
  if (length === name.length) {
    let k = 0;
    while (k < length && b[start + 1 + k] === name.charCodeAt(k)) k++;
    if (k === length) return true;
  }
  // An escape takes two bytes or more for one character: only a longer key may spell `name` with escapes.
  if (length <= name.length) return false;
  for (let j = start + 1; j < end - 1; j++) if (b[j] === BACKSLASH) return keyAt(b, start, end) === name;
  return false;
}

/**
 * Walks the members of the object at `i`, held by `outer` containers: `visit(keyStart, keyEnd, valueStart)`
 * returns the index after the value it consumed, or -1 to have it skipped
 * (structure only: the caller parses the skipped text itself).
 * Returns the index after the closing brace.
 */
export function members(b: Buffer, i: number, outer: number, visit: (keyStart: number, keyEnd: number, start: number) => number): number {
  if (b[i] !== OPEN_BRACE) fail('expected an object', i);
  if (outer >= MAX_DEPTH) failDepth(i);
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
    if (end < 0) end = skipValue(b, start, outer + 1);
    j = skipSpace(b, end);
    const c = b[j];
    if (c === CLOSE_BRACE) return j + 1;
    if (c !== COMMA) fail('expected "," or "}"', j);
    j = skipSpace(b, j + 1);
  }
}

/**
 * The deepest nesting of a JSON text read in pieces, following strings and brackets only (no syntax check):
 * what keeps `JSON.parse` from taking a text nested past {@link MAX_DEPTH}. A text nested that deep is at least
 * twice as long, so a single text shorter than `2 * MAX_DEPTH` bytes needs no count ({@link mayNestTooDeep}).
 */
export class NestingGauge {
  private depth = 0;
  /** Whether the bytes so far end in a string, and in it after a backslash (the next byte is escaped). */
  private inString = false;
  private escaped = false;
  /** Whether the text so far nests past {@link MAX_DEPTH}. */
  tooDeep = false;

  /** The next bytes of the text. */
  push(b: Buffer): void {
    if (b.length === 0) return;
    let depth = this.depth;
    let j = 0;
    if (this.inString) j = this.stringEnd(b, this.escaped ? 1 : 0);
    const length = b.length;
    while (j < length) {
      const c = b[j++]!;
      if (c === QUOTE) j = this.stringEnd(b, j);
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (++depth > MAX_DEPTH) this.tooDeep = true;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    }
    this.depth = depth;
  }

  /** The index after the closing quote of the string going on at `j` (`b.length` when it goes on past `b`). */
  private stringEnd(b: Buffer, j: number): number {
    for (;;) {
      const quote = b.indexOf(QUOTE, j);
      if (quote < 0) {
        this.inString = true;
        this.escaped = backslashesBefore(b, b.length, j) % 2 === 1;
        return b.length;
      }
      // A quote after an odd number of backslashes is escaped.
      if (backslashesBefore(b, quote, j) % 2 === 0) {
        this.inString = false;
        this.escaped = false;
        return quote + 1;
      }
      j = quote + 1;
    }
  }
}

/** How many backslashes end `b[from, at)`. */
function backslashesBefore(b: Buffer, at: number, from: number): number {
  let k = at;
  while (k > from && b[k - 1] === BACKSLASH) k--;
  return at - k;
}

/** Whether a text of `length` characters or bytes can nest past {@link MAX_DEPTH} (each level takes two). */
export function mayNestTooDeep(length: number): boolean {
  return length > 2 * MAX_DEPTH;
}
