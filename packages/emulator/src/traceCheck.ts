/**
 * The rules a trace must keep to be replayed over HTTP: rx-informer's trace reader's (`TraceChecker` and
 * `readTraceHeader` in its src/1-transport/trace/format.ts), kept here because the emulator imports nothing of the
 * library. A trace `replayListWatch` refuses is refused here too, at the same line, with the same words after
 * `replay: ` (spec/emulator/replayStrict.spec.ts runs the reader's table of hostile traces through both, and checks
 * that the constants and the reasons below are the library's):
 *
 * - a header on line 1: `type: "header"`, the format's name, version 1, `startedAt` an ISO 8601 date and time with
 *   `Z` or an offset, `resources` (strings, at most 1000), `redacted`, optional `server` and `options`;
 * - every other line one of the format's, strict (no member the writer does not write), with `at` (≥ 0, ≤ 100
 *   years in ms, never going backwards) and but for `stop` an `id`; a request's options only those of a list or a
 *   watch;
 * - no line over 64 MiB, no `list`/`watch` line over 64 KiB, nothing nested deeper than 1000 levels (the header too),
 *   no line of more than 4,000,000 arrays and objects (both scanned before it is parsed), no more than 200,000 requests;
 * - no line after `stop`; request ids used once; a request's lines between its start and its end (a page of a
 *   list, an event of a watch); a request for a resource the header lists; list pages that chain.
 */

export const TRACE_FORMAT = 'rx-informer-trace';
export const TRACE_FORMAT_VERSION = 1;
export const MAX_TRACE_LINE_BYTES = 64 * 1024 * 1024;
export const MAX_TRACE_REQUEST_LINE_BYTES = 64 * 1024;
export const MAX_TRACE_DEPTH = 1000;
export const MAX_TRACE_RESOURCES = 1000;
export const MAX_TRACE_LINE_CONTAINERS = 4_000_000;
export const MAX_TRACE_REQUESTS = 200_000;
export const MAX_TRACE_AT_MS = 100 * 365.25 * 24 * 3_600_000;

/** The reasons of a recorded error: the library's `ErrorReason`s. */
export const TRACE_REASONS: readonly string[] = [
  'Expired',
  'Gone',
  'TooManyRequests',
  'ServerError',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'BadRequest',
  'Invalid',
  'Conflict',
  'NetworkError',
  'ProtocolError',
  'Timeout',
  'VeryShortWatch',
  'MalformedLine',
  'ListTooLong',
  'UnknownEventType',
  'ValidationFailed',
  'TransformError',
  'IndexerError',
  'WatchError',
  'HandlerError',
  'Config',
  'CredentialPlugin',
  'NotAcceptable',
  'ResponseTooLarge',
  'Unknown',
];

/** A trace the emulator will not replay: `replay: trace line N: what is wrong`. */
export class TraceLineError extends Error {
  readonly line: number;
  constructor(line: number, message: string) {
    super(`replay: trace line ${line}: ${message}`);
    this.name = 'TraceLineError';
    this.line = line;
  }
}

/** A check of one value: what is wrong with it (a path-less issue), or undefined. */
type Check = (value: unknown) => string | undefined;
/** An object checked member by member; `strict`: a member it does not name is an issue. */
interface Nested {
  readonly shape: Shape;
  readonly strict: boolean;
}
/** An array whose every item `each` checks (an issue names the item: `resources.0`). */
interface Each {
  readonly each: Check;
}
/** An object's members: each one's check (or nested shape, or items' check), and whether it may be left out. */
type Shape = Readonly<Record<string, readonly [check: Check | Nested | Each, optional?: 'optional']>>;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const received = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

const string: Check = (v) => (typeof v === 'string' ? undefined : `Invalid input: expected string, received ${received(v)}`);
const nonEmpty: Check = (v) => string(v) ?? ((v as string).length === 0 ? 'Too small: expected string to have >=1 characters' : undefined);
const boolean: Check = (v) => (typeof v === 'boolean' ? undefined : `Invalid input: expected boolean, received ${received(v)}`);
const number: Check = (v) =>
  typeof v === 'number' && Number.isFinite(v) ? undefined : `Invalid input: expected number, received ${received(v)}`;
const int: Check = (v) => number(v) ?? (Number.isInteger(v) ? undefined : 'Invalid input: expected int, received number');
const atLeast0 =
  (check: Check): Check =>
  (v) =>
    check(v) ?? ((v as number) < 0 ? 'Too small: expected number to be >=0' : undefined);
/** Anything, but present when required (`event.object`). */
const unknown: Check = (v) => (v === undefined ? 'Invalid input: expected nonoptional, received undefined' : undefined);
/** One of `values` (one value: a literal, in its words). */
const oneOf =
  (...values: readonly unknown[]): Check =>
  (v) => {
    if (values.includes(v)) return undefined;
    const texts = values.map((x) => JSON.stringify(x));
    return values.length === 1 ? `Invalid input: expected ${texts[0]}` : `Invalid option: expected one of ${texts.join('|')}`;
  };
const array: Check = (v) => (Array.isArray(v) ? undefined : `Invalid input: expected array, received ${received(v)}`);
const strings: Each = { each: string };
const record: Check = (v) => (isObject(v) ? undefined : `Invalid input: expected record, received ${received(v)}`);
const at: Check = (v) =>
  atLeast0(number)(v) ?? ((v as number) > MAX_TRACE_AT_MS ? `Too big: expected number to be <=${MAX_TRACE_AT_MS}` : undefined);
const id = atLeast0(int);

/** A date and time of RFC 3339 with `Z` or an offset, on a day the calendar has. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;
const dateTime: Check = (v) => {
  const match = typeof v === 'string' ? DATE_TIME.exec(v) : null;
  if (!match) return 'Invalid ISO datetime';
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return month >= 1 && month <= 12 && date.getUTCDate() === day && date.getUTCMonth() === month - 1 ? undefined : 'Invalid ISO datetime';
};

/** The issues of `value` against `shape`, as `path: issue` (`options: Unrecognized key: "pad"`). */
function issuesOf(value: unknown, { shape, strict }: Nested, path: string): string[] {
  const where = (key?: string) => [path, key].filter(Boolean).join('.') || '(line)';
  if (!isObject(value)) return [`${where()}: Invalid input: expected object, received ${received(value)}`];
  const issues: string[] = [];
  for (const [key, [check, optional]] of Object.entries(shape)) {
    if (value[key] === undefined && optional) continue;
    if ('each' in check) {
      const items = value[key];
      const issue = array(items);
      if (issue !== undefined) issues.push(`${where(key)}: ${issue}`);
      else
        (items as unknown[]).forEach((item, i) => {
          const bad = check.each(item);
          if (bad !== undefined) issues.push(`${where(key)}.${i}: ${bad}`);
        });
      continue;
    }
    if ('shape' in check) {
      issues.push(...issuesOf(value[key], check, [path, key].filter(Boolean).join('.')));
      continue;
    }
    const issue = check(value[key]);
    if (issue !== undefined) issues.push(`${where(key)}: ${issue}`);
  }
  if (strict) for (const key of Object.keys(value)) if (!(key in shape)) issues.push(`${where()}: Unrecognized key: "${key}"`);
  return issues;
}

const RECORDED_ERROR: Shape = {
  reason: [oneOf(...TRACE_REASONS)],
  message: [string],
  status: [int, 'optional'],
  phase: [oneOf('list', 'watch', 'decode', 'handler', 'config'), 'optional'],
  retryAfterSeconds: [atLeast0(number), 'optional'],
  key: [string, 'optional'],
  resourceVersion: [string, 'optional'],
  statusObject: [unknown, 'optional'],
  unreachable: [oneOf(true), 'optional'],
};
const LIST_OPTIONS: Shape = {
  resourceVersion: [string, 'optional'],
  resourceVersionMatch: [oneOf('NotOlderThan', 'Exact'), 'optional'],
  limit: [int, 'optional'],
  continue: [string, 'optional'],
};
const WATCH_OPTIONS: Shape = {
  resourceVersion: [string, 'optional'],
  resourceVersionMatch: [oneOf('NotOlderThan'), 'optional'],
  allowWatchBookmarks: [boolean, 'optional'],
  timeoutSeconds: [number, 'optional'],
  sendInitialEvents: [boolean, 'optional'],
};

const recordedError: Nested = { shape: RECORDED_ERROR, strict: false };

/** The members of each type of line (every line is strict). */
const LINES: Readonly<Record<string, Shape>> = {
  list: { type: [unknown], at: [at], id: [id], resource: [nonEmpty, 'optional'], options: [{ shape: LIST_OPTIONS, strict: true }] },
  page: {
    type: [unknown],
    at: [at],
    id: [id],
    resourceVersion: [string],
    continue: [string, 'optional'],
    remainingItemCount: [int, 'optional'],
    items: [array],
    notice: [recordedError, 'optional'],
  },
  watch: { type: [unknown], at: [at], id: [id], resource: [nonEmpty, 'optional'], options: [{ shape: WATCH_OPTIONS, strict: true }] },
  event: { type: [unknown], at: [at], id: [id], event: [{ shape: { type: [string], object: [unknown] }, strict: true }] },
  notice: { type: [unknown], at: [at], id: [id], error: [recordedError] },
  failure: { type: [unknown], at: [at], id: [id], error: [recordedError] },
  end: { type: [unknown], at: [at], id: [id], how: [oneOf('complete', 'unsubscribe')] },
  stop: { type: [unknown], at: [at], why: [oneOf('maxBytes', 'duration', 'closed')] },
};

const HEADER: Shape = {
  type: [oneOf('header')],
  format: [oneOf(TRACE_FORMAT)],
  version: [int],
  startedAt: [dateTime],
  server: [string, 'optional'],
  resources: [strings],
  options: [record, 'optional'],
  redacted: [boolean],
};

/** What is wrong with the shape of the JSON `text` (its brackets outside strings), scanned before it is parsed. */
function shapeFault(text: string): string | undefined {
  if (text.length <= 2 * MAX_TRACE_DEPTH) return undefined;
  let depth = 0;
  let containers = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_TRACE_DEPTH) return `nested deeper than ${MAX_TRACE_DEPTH} levels`;
      if (++containers > MAX_TRACE_LINE_CONTAINERS) return `more than ${MAX_TRACE_LINE_CONTAINERS} arrays and objects`;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** Parses line `line`'s text: JSON of a bounded shape, or the error naming it. */
export function parseTraceLine(text: string, line: number): unknown {
  const fault = shapeFault(text);
  if (fault !== undefined) throw new TraceLineError(line, fault);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new TraceLineError(line, `not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** The resources of the header on line 1, or the error saying why it is not one. */
export function checkTraceHeader(json: unknown): readonly string[] {
  const header = json as { type?: unknown; format?: unknown; version?: unknown } | null;
  if (!isObject(header) || header.type !== 'header' || header.format !== TRACE_FORMAT)
    throw new TraceLineError(1, `not an ${TRACE_FORMAT} header`);
  if (header.version !== TRACE_FORMAT_VERSION)
    throw new TraceLineError(1, `format version ${String(header.version)}; this reader reads version ${TRACE_FORMAT_VERSION}`);
  const issues = issuesOf(header, { shape: HEADER, strict: false }, '');
  if (issues.length) throw new TraceLineError(1, issues.join('; '));
  const { resources } = header as { resources: string[] };
  if (resources.length > MAX_TRACE_RESOURCES)
    throw new TraceLineError(1, `a header of ${resources.length} resources; a reader takes at most ${MAX_TRACE_RESOURCES}`);
  return resources;
}

/** A line read and checked: its type, time, id and, for a request, its resource and options. */
export interface CheckedLine {
  readonly type: string;
  readonly at: number;
  readonly id?: number;
  readonly resource?: string;
  readonly options?: Record<string, unknown>;
  readonly continue?: string;
}

/** Checks lines one by one as they are read, in order (line 2 on), as the library's `TraceChecker` does. */
export class TraceLineChecker {
  private lastAt = 0;
  private stopped = false;
  private readonly open = new Map<number, CheckedLine>();
  private readonly seen = new Set<number>();
  private readonly nextToken = new Map<string, string>();

  private readonly resources: readonly string[];

  constructor(resources: readonly string[]) {
    this.resources = resources;
  }

  /** Line `line`, parsed (`bytes` long in UTF-8). */
  check(json: unknown, bytes: number, line: number): CheckedLine {
    const type = isObject(json) ? json['type'] : undefined;
    const shape = typeof type === 'string' && Object.hasOwn(LINES, type) ? LINES[type] : undefined;
    if (!shape) {
      const types = Object.keys(LINES).map((t) => `'${t}'`);
      throw new TraceLineError(
        line,
        isObject(json)
          ? `type: Invalid discriminator value. Expected ${types.join(' | ')}`
          : `(line): Invalid input: expected object, received ${received(json)}`,
      );
    }
    const issues = issuesOf(json, { shape, strict: true }, '');
    if (issues.length) throw new TraceLineError(line, issues.join('; '));
    const record = json as unknown as CheckedLine;
    if ((record.type === 'list' || record.type === 'watch') && bytes > MAX_TRACE_REQUEST_LINE_BYTES)
      throw new TraceLineError(line, `a ${record.type} request line longer than ${MAX_TRACE_REQUEST_LINE_BYTES} bytes`);
    if (this.stopped) throw new TraceLineError(line, 'a line after the `stop` line');
    if (record.at < this.lastAt) throw new TraceLineError(line, `time goes backwards (${record.at} ms after ${this.lastAt} ms)`);
    this.lastAt = record.at;
    if (record.type === 'stop') this.stopped = true;
    else this.request(record, line);
    return record;
  }

  private request(record: CheckedLine, line: number): void {
    const id = record.id!;
    if (record.type === 'list' || record.type === 'watch') {
      this.listed(record, line);
      if (this.seen.has(id)) throw new TraceLineError(line, `request id ${id} used twice`);
      if (this.seen.size >= MAX_TRACE_REQUESTS) throw new TraceLineError(line, `more than ${MAX_TRACE_REQUESTS} requests`);
      this.seen.add(id);
      this.open.set(id, record);
      if (record.type === 'list') this.chains(record, line);
      return;
    }
    const request = this.open.get(id);
    if (!request) throw new TraceLineError(line, `${record.type} of request ${id}, which is not open`);
    if (record.type === 'page') {
      if (request.type !== 'list') throw new TraceLineError(line, `a page of request ${id}, a watch`);
      const key = request.resource ?? '';
      if (record.continue) this.nextToken.set(key, record.continue);
      else this.nextToken.delete(key);
    }
    if (record.type === 'event' && request.type !== 'watch') throw new TraceLineError(line, `a watch event of request ${id}, a list`);
    if (record.type === 'failure' || record.type === 'end') this.open.delete(id);
  }

  private listed(record: CheckedLine, line: number): void {
    const { resources } = this;
    if (record.resource !== undefined ? resources.includes(record.resource) : resources.length > 0) return;
    throw new TraceLineError(
      line,
      `a ${record.type} request for ${record.resource ?? 'a resource'} the header does not list (it lists ${resources.join(', ') || 'none'})`,
    );
  }

  private chains(record: CheckedLine, line: number): void {
    const token = record.options?.['continue'];
    if (token === undefined) return;
    const expected = this.nextToken.get(record.resource ?? '');
    if (expected !== token)
      throw new TraceLineError(
        line,
        `pages do not chain: a list continues from "${String(token)}", the last page gave ${expected === undefined ? 'no token' : `"${expected}"`}`,
      );
  }
}
