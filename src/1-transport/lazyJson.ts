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
 * enumerable accessor that parses its span of the source text on first read
 * and then replaces itself with a plain data property; assigning to it does
 * the same. So `JSON.stringify`, spreading, `structuredClone`, `Object.keys`
 * and deep equality see the whole object. The source text (a watch line, or a
 * list item's own copy of its span of the page) is held until every member of
 * the object is read.
 *
 * The scan checks structure up front (balanced brackets, terminated strings,
 * a `{type, object}` event shape), so a truncated line is an error at once;
 * the syntax inside a member (a bad number, a bad escape) is checked when the
 * member is parsed, and a `SyntaxError` then comes from that property read.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Where a lazy object's unparsed members are: `text` and, per key, its span. */
interface Source {
  text: string | undefined;
  /** Where in `text` the spans count from. */
  offset: number;
  readonly spans: Map<string, number>;
  pending: number;
  /** Values read from a frozen object, which cannot take them as data properties. */
  frozen?: Map<string, unknown>;
}

/** The lazy members' sources, keyed by the object holding them. */
const sources = new WeakMap<object, Source>();

/** The text could not be scanned as JSON of the expected shape. */
export class LazyJsonError extends Error {
  override readonly name = 'LazyJsonError';
}

function fail(what: string, at: number): never {
  throw new LazyJsonError(`${what} at position ${at}`);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(s: string, i: number): number {
  while (isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** The index after the string whose opening quote is at `i`. */
function stringEnd(s: string, i: number): number {
  let j = s.indexOf('"', i + 1);
  while (j >= 0 && s.charCodeAt(j - 1) === BACKSLASH) {
    // Escaped unless the backslashes before it pair up.
    let k = j - 2;
    while (s.charCodeAt(k) === BACKSLASH) k--;
    if ((j - 1 - k) % 2 === 0) break;
    j = s.indexOf('"', j + 1);
  }
  if (j < 0) fail('unterminated string', i);
  return j + 1;
}

/**
 * The index after the JSON value that starts at `i` (no leading space). Only
 * nesting depth is tracked: which bracket closes which, like the rest of the
 * syntax inside a lazy member, is checked when the member is parsed.
 */
function valueEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return stringEnd(s, i);
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) {
    let j = i;
    for (;;) {
      const d = s.charCodeAt(j);
      if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d) || j >= s.length) break;
      if (d === QUOTE || d === OPEN_BRACE || d === OPEN_BRACKET || d === COLON) fail('unexpected character', j);
      j++;
    }
    if (j === i) fail('missing value', i);
    return j;
  }
  const length = s.length;
  let depth = 0;
  let j = i;
  while (j < length) {
    const d = s.charCodeAt(j);
    if (d === QUOTE) {
      j = stringEnd(s, j);
      continue;
    }
    if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
    else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return j + 1;
    j++;
  }
  return fail('unterminated value', i);
}

/**
 * Walks the members of the object at `i`: `visit(key, valueStart)` returns the
 * index after the value it consumed, or -1 to have it skipped. Returns the
 * index after the closing brace.
 */
function members(s: string, i: number, visit: (key: string, start: number) => number): number {
  if (s.charCodeAt(i) !== OPEN_BRACE) fail('expected an object', i);
  let j = skipSpace(s, i + 1);
  if (s.charCodeAt(j) === CLOSE_BRACE) return j + 1;
  for (;;) {
    if (s.charCodeAt(j) !== QUOTE) fail('expected a key', j);
    const keyEnd = stringEnd(s, j);
    const raw = s.slice(j + 1, keyEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(s.slice(j, keyEnd)) as string) : raw;
    j = skipSpace(s, keyEnd);
    if (s.charCodeAt(j) !== COLON) fail('expected ":"', j);
    const start = skipSpace(s, j + 1);
    let end = visit(key, start);
    if (end < 0) end = valueEnd(s, start);
    j = skipSpace(s, end);
    const c = s.charCodeAt(j);
    if (c === CLOSE_BRACE) return j + 1;
    if (c !== COMMA) fail('expected "," or "}"', j);
    j = skipSpace(s, j + 1);
  }
}

/** Reads a lazy member: parses its span, keeps it as a data property. */
function materialize(target: object, key: string): unknown {
  const source = sources.get(target);
  if (source?.frozen?.has(key)) return source.frozen.get(key);
  const span = source?.spans.get(key);
  if (!source || source.text === undefined || span === undefined) return undefined;
  const start = source.offset + Math.floor(span / 2 ** 26);
  const value: unknown = JSON.parse(source.text.slice(start, start + (span % 2 ** 26)));
  settle(target, key, value, source);
  return value;
}

function settle(target: object, key: string, value: unknown, source: Source | undefined): void {
  if (!Reflect.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })) {
    // A frozen object keeps its accessors: keep what they read (one identity per member).
    if (source) (source.frozen ??= new Map()).set(key, value);
    return;
  }
  if (source && source.spans.delete(key) && --source.pending === 0) {
    source.text = undefined;
    sources.delete(target);
  }
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

/** Spans up to 64 MiB long and starting below 2^27 chars pack into one number. */
function packSpan(start: number, end: number): number {
  if (end - start >= 2 ** 26 || start >= 2 ** 27) fail('value too large for lazy decoding', start);
  return start * 2 ** 26 + (end - start);
}

function defineLazy(target: Record<string, unknown>, key: string, start: number, end: number, source: Source, base: number): void {
  // A repeated key: the last one wins, as with JSON.parse.
  if (!source.spans.has(key)) source.pending++;
  source.spans.set(key, packSpan(start - base, end - base));
  Object.defineProperty(target, key, accessorFor(key));
}

function defineEager(target: Record<string, unknown>, key: string, value: unknown, source: Source | undefined): void {
  if (source?.spans.delete(key)) source.pending--;
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Members shorter than this are parsed at once (a lazy member costs about that much). */
const EAGER_CHARS = 24;

/**
 * Parses the metadata object at `i`, all but `managedFields`, which stays lazy;
 * its span counts from `base`, where the enclosing object starts.
 */
function metadataAt(s: string, i: number, base: number): { value: Record<string, unknown>; end: number } {
  let cutStart = -1;
  let cutEnd = -1;
  const end = members(s, i, (key, start) => {
    if (key !== 'managedFields') return -1;
    const valueStop = valueEnd(s, start);
    cutStart = start;
    cutEnd = valueStop;
    return valueStop;
  });
  if (cutStart < 0) return { value: JSON.parse(s.slice(i, end)) as Record<string, unknown>, end };
  // Parse the metadata text with managedFields' value replaced by null, then
  // make that member lazy in place (so the key keeps its position).
  const value = JSON.parse(`${s.slice(i, cutStart)}null${s.slice(cutEnd, end)}`) as Record<string, unknown>;
  if (cutEnd - cutStart >= EAGER_CHARS) {
    const metaSource: Source = { text: s, offset: base, spans: new Map(), pending: 0 };
    defineLazy(value, 'managedFields', cutStart, cutEnd, metaSource, base);
    sources.set(value, metaSource);
  } else value.managedFields = JSON.parse(s.slice(cutStart, cutEnd));
  return { value, end };
}

/**
 * The object whose `{` is at `i` of `s`, decoded lazily, and the index after it.
 * `apiVersion`, `kind`, `metadata` and short members are parsed at once.
 */
export function lazyObjectAt(s: string, i: number, own?: (start: number, end: number) => string): { value: Record<string, unknown>; end: number } {
  const target: Record<string, unknown> = {};
  // The object's lazy members, and its metadata's (managedFields), read from `s` at `i` until `own` gives a copy.
  let source: Source | undefined;
  let metaSource: Source | undefined;
  const sourceOf = () => (source ??= { text: s, offset: i, spans: new Map(), pending: 0 });
  const end = members(s, i, (key, start) => {
    if (key === 'metadata' && s.charCodeAt(start) === OPEN_BRACE) {
      const metadata = metadataAt(s, start, i);
      metaSource = sources.get(metadata.value);
      defineEager(target, key, metadata.value, source);
      return metadata.end;
    }
    const valueStop = valueEnd(s, start);
    if (valueStop - start < EAGER_CHARS || key === 'apiVersion' || key === 'kind') {
      defineEager(target, key, JSON.parse(s.slice(start, valueStop)), source);
    } else defineLazy(target, key, start, valueStop, sourceOf(), i);
    return valueStop;
  });
  const holders = [source?.pending ? source : undefined, metaSource].filter((held): held is Source => held !== undefined);
  if (own && holders.length > 0) {
    const copy = own(i, end);
    for (const held of holders) {
      held.text = copy;
      held.offset = 0;
    }
  }
  if (source && source.pending > 0) sources.set(target, source);
  return { value: target, end };
}

/** A whole text holding one object, decoded lazily. */
export function lazyParseObject(s: string): Record<string, unknown> {
  const start = skipSpace(s, 0);
  const { value, end } = lazyObjectAt(s, start);
  if (skipSpace(s, end) !== s.length) fail('unexpected text after the object', end);
  return value;
}

/**
 * A watch line `{"type": …, "object": {…}}` with a lazily decoded object; other
 * members of the line (there are none in practice) are parsed.
 */
export function lazyParseWatchLine(line: string): { type: unknown; object: unknown } {
  const event: { type: unknown; object: unknown } = { type: undefined, object: undefined };
  const end = members(line, skipSpace(line, 0), (key, start) => {
    if (key === 'object' && line.charCodeAt(start) === OPEN_BRACE) {
      const object = lazyObjectAt(line, start);
      event.object = object.value;
      return object.end;
    }
    const valueStop = valueEnd(line, start);
    if (key === 'type') event.type = JSON.parse(line.slice(start, valueStop));
    return valueStop;
  });
  if (skipSpace(line, end) !== line.length) fail('unexpected text after the event', end);
  return event;
}

/** A copy of `s.slice(start, end)` that does not keep `s` alive (V8 slices do). */
function detachedSlice(s: string): (start: number, end: number) => string {
  return (start, end) => Buffer.from(s.slice(start, end), 'utf8').toString('utf8');
}

/**
 * A list response with lazily decoded items: the list's own members are
 * parsed, `items` becomes an array of lazy objects. Each item holds a text of
 * its own, `itemText(start, end)` (by default a copy of that span of `body`),
 * so that a cached item never keeps its whole page alive.
 */
export function lazyParseList(body: string, itemText: (start: number, end: number) => string = detachedSlice(body)): Record<string, unknown> {
  const list: Record<string, unknown> = {};
  const end = members(body, skipSpace(body, 0), (key, start) => {
    if (key !== 'items' || body.charCodeAt(start) !== OPEN_BRACKET) {
      const valueStop = valueEnd(body, start);
      defineEager(list, key, JSON.parse(body.slice(start, valueStop)), undefined);
      return valueStop;
    }
    const items: unknown[] = [];
    let j = skipSpace(body, start + 1);
    if (body.charCodeAt(j) === CLOSE_BRACKET) {
      defineEager(list, key, items, undefined);
      return j + 1;
    }
    for (;;) {
      if (body.charCodeAt(j) === OPEN_BRACE) {
        const item = lazyObjectAt(body, j, itemText);
        items.push(item.value);
        j = item.end;
      } else {
        const valueStop = valueEnd(body, j);
        items.push(JSON.parse(body.slice(j, valueStop)));
        j = valueStop;
      }
      j = skipSpace(body, j);
      const c = body.charCodeAt(j);
      if (c === CLOSE_BRACKET) break;
      if (c !== COMMA) fail('expected "," or "]"', j);
      j = skipSpace(body, j + 1);
    }
    defineEager(list, key, items, undefined);
    return j + 1;
  });
  if (skipSpace(body, end) !== body.length) fail('unexpected text after the list', end);
  return list;
}

/**
 * A shallow copy of `object` with `metadata` replaced. Members of a lazily
 * decoded object that were not read stay unparsed in the copy (spreading would
 * parse them all); any other object is copied by spreading.
 */
export function withMetadata<T extends { metadata: unknown }>(object: T, metadata: T['metadata']): T {
  const source = sources.get(object);
  if (!source || source.text === undefined || source.frozen) return { ...object, metadata };
  const copy: Record<string, unknown> = {};
  const spans = new Map<string, number>();
  for (const key of Object.keys(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, key)!;
    const span = source.spans.get(key);
    if (descriptor.get && span !== undefined) {
      spans.set(key, span);
      Object.defineProperty(copy, key, accessorFor(key));
    } else defineEager(copy, key, key === 'metadata' ? metadata : (object as Record<string, unknown>)[key], undefined);
  }
  if (!Object.prototype.hasOwnProperty.call(copy, 'metadata')) copy.metadata = metadata;
  if (spans.size > 0) sources.set(copy, { text: source.text, offset: source.offset, spans, pending: spans.size });
  return copy as T;
}

/** True when `object` still has members that have not been parsed. */
export function hasUnparsedMembers(object: object): boolean {
  return sources.has(object);
}
