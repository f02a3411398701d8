/**
 * The trace format: what a {@link ListWatch} saw, one JSON object per line (JSON Lines), written by
 * `record` and read back by `replayListWatch` (rx-informer/testing) and the emulator's `replay` option.
 *
 * Line 1 is the header (`"type": "header"`, the format's name and version, the start time, the resources
 * recorded, the options given). Every other line has a `type`, `at` (milliseconds since the start, never
 * decreasing) and, but for `stop`, the `id` of the request it belongs to:
 *
 *   list     a list request and its options            page     its one page (resourceVersion, continue, items)
 *   watch    a watch request and its options           event    one watch frame: ADDED … BOOKMARK, ERROR (a Status)
 *   notice   an error frame of a watch or a page's notice (MalformedLine, NotAcceptable): the request goes on
 *   failure  the request failed: the InformerError's reason, message, HTTP status and the server's Status
 *   end      the request ended: `complete` (by the server) or `unsubscribe` (the client aborted it)
 *   stop     the recording stopped (`maxBytes`, `duration`, `closed`): the last line, when present
 *
 * docs/testing.md describes it for readers written in another language (the emulator reads it on its own).
 */
import { z } from 'zod';
import { InformerError, REASON_CLASSES, type ErrorReason } from '../../0-model/errors.ts';
import type { ListOptions, WatchOptions } from '../listWatch.ts';
import { hasUnparsedMembers, jsonText } from '../lazyJson.ts';

export const TRACE_FORMAT = 'rx-informer-trace';
export const TRACE_FORMAT_VERSION = 1;
/** The longest line a reader accepts by default (a large list page is one line). */
export const MAX_TRACE_LINE_BYTES = 64 * 1024 * 1024;
/**
 * The longest `list` or `watch` line a reader accepts: a reader keeps these lines whole (the requests of a replay), and
 * what they hold (options, a continue token, a resource name) is a few hundred bytes.
 */
export const MAX_TRACE_REQUEST_LINE_BYTES = 64 * 1024;
/**
 * The deepest nesting of arrays and objects a reader accepts in a line. A Kubernetes object is a few dozen levels deep;
 * a line nested some thousands deep parses, but writing it again (a trim, a replay over HTTP) or copying it overflows
 * the stack.
 */
export const MAX_TRACE_DEPTH = 1000;
/**
 * The most resources a header may list: a replay runs an informer for each, and what each costs is a pass over its
 * requests; a recording names a handful (a cluster's every type is a few hundred).
 */
export const MAX_TRACE_RESOURCES = 1000;
/**
 * The most arrays and objects a line may hold, counted before it is parsed: parsing makes each one an object, so a
 * 64 MiB page of 20 million `{}` cost gigabytes (audit24). A real page of 64 MiB holds under 2 million (objects of a few
 * dozen bytes a level at the least: managedFields).
 */
export const MAX_TRACE_LINE_CONTAINERS = 4_000_000;
/**
 * The most requests (`list` and `watch` lines) a trace may hold: a reader keeps each (a few hundred bytes). A
 * recording of 100 resources whose watches end every 5 minutes makes ~30,000 a day.
 */
export const MAX_TRACE_REQUESTS = 200_000;

/**
 * The latest `at` a reader accepts: 100 years, in ms. So the start plus any `at` is a time a Date holds (a line at
 * 1e300 ms would print and cut as an invalid date).
 */
export const MAX_TRACE_AT_MS = 100 * 365.25 * 24 * 3_600_000;

const at = z.number().nonnegative().max(MAX_TRACE_AT_MS);
const id = z.number().int().nonnegative();
/** The resource a request was for (`pods`, `deployments.apps`); absent when the trace has one. */
const resource = z.string().min(1).optional();

export const TraceHeader = z.object({
  type: z.literal('header'),
  format: z.literal(TRACE_FORMAT),
  version: z.number().int(),
  /** Wall-clock time of the start, an ISO 8601 date and time with `Z` or an offset (`2026-01-01T10:00:00.000Z`). */
  startedAt: z.iso.datetime({ offset: true }),
  /** The server's `gitVersion`, when known. */
  server: z.string().optional(),
  resources: z.array(z.string()),
  /** The options of the recording (selectors, page size, …): informative. */
  options: z.record(z.string(), z.unknown()).optional(),
  /** Whether Secret values were redacted. */
  redacted: z.boolean(),
});
export type TraceHeader = z.infer<typeof TraceHeader>;

const reasons = Object.keys(REASON_CLASSES) as [ErrorReason, ...ErrorReason[]];

/** An {@link InformerError} as data. */
export const RecordedError = z.object({
  reason: z.enum(reasons),
  message: z.string(),
  status: z.number().int().optional(),
  phase: z.enum(['list', 'watch', 'decode', 'handler', 'config']).optional(),
  retryAfterSeconds: z.number().nonnegative().optional(),
  key: z.string().optional(),
  resourceVersion: z.string().optional(),
  /** The Kubernetes Status the server sent, if any. */
  statusObject: z.unknown().optional(),
  /** No server answered (refused, reset before a response, DNS, a connect timeout). */
  unreachable: z.literal(true).optional(),
});
export type RecordedError = z.infer<typeof RecordedError>;

/**
 * Strict, as the writer writes them (`canonicalOptions` of a ListOptions or WatchOptions): a key of no request option
 * is an error, so what a reader keeps of a request line is these few short fields (a later option is a new version).
 */
export const TraceListOptions = z.strictObject({
  resourceVersion: z.string().optional(),
  resourceVersionMatch: z.enum(['NotOlderThan', 'Exact']).optional(),
  limit: z.number().int().optional(),
  continue: z.string().optional(),
});
export type TraceListOptions = z.infer<typeof TraceListOptions>;

export const TraceWatchOptions = z.strictObject({
  resourceVersion: z.string().optional(),
  resourceVersionMatch: z.literal('NotOlderThan').optional(),
  allowWatchBookmarks: z.boolean().optional(),
  timeoutSeconds: z.number().optional(),
  sendInitialEvents: z.boolean().optional(),
});
export type TraceWatchOptions = z.infer<typeof TraceWatchOptions>;

export const TraceList = z.strictObject({ type: z.literal('list'), at, id, resource, options: TraceListOptions });
export type TraceList = z.infer<typeof TraceList>;

export const TracePage = z.strictObject({
  type: z.literal('page'),
  at,
  id,
  resourceVersion: z.string(),
  continue: z.string().optional(),
  remainingItemCount: z.number().int().optional(),
  items: z.array(z.unknown()),
  notice: RecordedError.optional(),
});
export type TracePage = z.infer<typeof TracePage>;

export const TraceWatch = z.strictObject({ type: z.literal('watch'), at, id, resource, options: TraceWatchOptions });
export type TraceWatch = z.infer<typeof TraceWatch>;

export const TraceEvent = z.strictObject({
  type: z.literal('event'),
  at,
  id,
  event: z.strictObject({ type: z.string(), object: z.unknown() }),
});
export type TraceEvent = z.infer<typeof TraceEvent>;

export const TraceNotice = z.strictObject({ type: z.literal('notice'), at, id, error: RecordedError });
export type TraceNotice = z.infer<typeof TraceNotice>;

export const TraceFailure = z.strictObject({ type: z.literal('failure'), at, id, error: RecordedError });
export type TraceFailure = z.infer<typeof TraceFailure>;

export const TraceEnd = z.strictObject({ type: z.literal('end'), at, id, how: z.enum(['complete', 'unsubscribe']) });
export type TraceEnd = z.infer<typeof TraceEnd>;

export const TraceStop = z.strictObject({ type: z.literal('stop'), at, why: z.enum(['maxBytes', 'duration', 'closed']) });
export type TraceStop = z.infer<typeof TraceStop>;

/** Every line after the header. */
export const TraceLine = z.discriminatedUnion('type', [
  TraceList,
  TracePage,
  TraceWatch,
  TraceEvent,
  TraceNotice,
  TraceFailure,
  TraceEnd,
  TraceStop,
]);
export type TraceLine = z.infer<typeof TraceLine>;

/** A line about a request (all but `stop`). */
export type TraceRequestLine = Exclude<TraceLine, TraceStop>;

/** Why a recording stopped. */
export type TraceStopReason = TraceStop['why'];

/** A trace read and checked: the header and the lines after it (`lines[i]` is line `i + 2` of the file). */
export interface Trace {
  readonly header: TraceHeader;
  readonly lines: readonly TraceLine[];
}

/** A trace that cannot be read: the line (1-based) and what is wrong with it. */
export class TraceFormatError extends Error {
  readonly line: number;
  readonly issues: readonly z.core.$ZodIssue[];

  constructor(line: number, message: string, issues: readonly z.core.$ZodIssue[] = []) {
    super(`trace line ${line}: ${message}`);
    this.name = 'TraceFormatError';
    this.line = line;
    this.issues = issues;
  }
}

// -- errors as data ---------------------------------------------------------------

/** An InformerError (or anything thrown) as trace data. */
export function recordedError(error: unknown): RecordedError {
  if (!(error instanceof InformerError)) return { reason: 'Unknown', message: error instanceof Error ? error.message : String(error) };
  const out: Record<string, unknown> = { reason: error.reason, message: error.message };
  for (const key of ['status', 'phase', 'retryAfterSeconds', 'key', 'resourceVersion', 'statusObject'] as const)
    if (error[key] !== undefined) out[key] = error[key];
  if (error.unreachable) out['unreachable'] = true;
  return out as RecordedError;
}

/** How deep {@link scrubbedError} follows a status object: a Status is three levels deep (`details.causes[i]`). */
const SCRUB_DEPTH = 16;

/** What a scrubber that threw leaves of a text: nothing of it (it may hold the secret the scrubber was to remove). */
export const SCRUB_FAILED = "(withheld: the trace writer's scrub function threw)";

/**
 * `error` with `scrub` applied to its message and to every string of its status object (`TraceWriterOptions.scrub`:
 * the CLI's scrubber of the secrets its configuration holds). A scrub that throws withholds the text
 * ({@link SCRUB_FAILED}); a status object nested deeper than it is followed is withheld whole.
 */
export function scrubbedError(error: RecordedError, scrub: (text: string) => string): RecordedError {
  const text = (value: string) => {
    try {
      return scrub(value);
    } catch {
      return SCRUB_FAILED;
    }
  };
  const leaves = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return text(value);
    if (typeof value !== 'object' || value === null) return value;
    if (depth >= SCRUB_DEPTH) return SCRUB_FAILED;
    if (Array.isArray(value)) return value.map((v) => leaves(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      Object.defineProperty(out, k, { value: leaves(v, depth + 1), enumerable: true, writable: true, configurable: true });
    return out;
  };
  const { statusObject, ...rest } = error;
  return { ...rest, message: text(error.message), ...(statusObject === undefined ? {} : { statusObject: leaves(statusObject, 0) }) };
}

/** The InformerError a recorded error stands for. */
export function informerErrorOf(recorded: RecordedError): InformerError {
  const { reason, message, ...details } = recorded;
  return new InformerError(reason, message, details);
}

/** Options without their undefined members, in a fixed key order (what a trace holds, what a replay compares). */
export function canonicalOptions(options: ListOptions | WatchOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(options).sort()) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

// -- reading ----------------------------------------------------------------------

export interface ReadTraceOptions {
  /** The longest line accepted, in UTF-8 bytes. Default {@link MAX_TRACE_LINE_BYTES}. */
  readonly maxLineBytes?: number;
}

function issueText(issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((i) => `${i.path.length ? i.path.join('.') : '(line)'}: ${i.message}`).join('; ');
}

/**
 * What is wrong with the shape of the JSON `text`, found by a scan of its brackets outside strings before it is parsed:
 * nested deeper than {@link MAX_TRACE_DEPTH} (it would parse, but writing it again or copying it overflows the stack),
 * or holding more than {@link MAX_TRACE_LINE_CONTAINERS} arrays and objects (parsing it would cost gigabytes).
 */
function shapeFault(text: string): string | undefined {
  // Each level or container takes two characters at least: a shorter line is within both limits.
  if (text.length <= 2 * MAX_TRACE_DEPTH) return undefined;
  let depth = 0;
  let containers = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: on to its closing quote, past escapes.
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

function parseLine(text: string, line: number, maxLineBytes: number): unknown {
  if (Buffer.byteLength(text, 'utf8') > maxLineBytes) throw new TraceFormatError(line, `longer than ${maxLineBytes} bytes`);
  const fault = shapeFault(text);
  if (fault !== undefined) throw new TraceFormatError(line, fault);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new TraceFormatError(line, `not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** Reads the header (line 1), or says why it is not one this reader reads. */
export function readTraceHeader(text: string, options: ReadTraceOptions = {}): TraceHeader {
  const json = parseLine(text, 1, options.maxLineBytes ?? MAX_TRACE_LINE_BYTES);
  const object = json as { type?: unknown; format?: unknown; version?: unknown } | null;
  if (typeof object !== 'object' || object === null || object.type !== 'header' || object.format !== TRACE_FORMAT)
    throw new TraceFormatError(1, `not an ${TRACE_FORMAT} header`);
  if (object.version !== TRACE_FORMAT_VERSION)
    throw new TraceFormatError(1, `format version ${String(object.version)}; this reader reads version ${TRACE_FORMAT_VERSION}`);
  const parsed = TraceHeader.safeParse(json);
  if (!parsed.success) throw new TraceFormatError(1, issueText(parsed.error.issues), parsed.error.issues);
  if (parsed.data.resources.length > MAX_TRACE_RESOURCES)
    throw new TraceFormatError(1, `a header of ${parsed.data.resources.length} resources; a reader takes at most ${MAX_TRACE_RESOURCES}`);
  return parsed.data;
}

/**
 * Checks lines one by one as they are read (a streaming reader feeds it): the schema of each line,
 * times that never go backwards, requests whose lines come between their start and their end, and
 * list pages that chain (a list with a `continue` token asks for the token the previous page gave).
 */
export class TraceChecker {
  private lastAt = 0;
  private stopped = false;
  private readonly open = new Map<number, TraceList | TraceWatch>();
  private readonly seen = new Set<number>();
  /** The last page's continue token, by resource. */
  private readonly nextToken = new Map<string, string>();
  private readonly maxLineBytes: number;
  private readonly header: TraceHeader;

  /** `header`: the trace's, read by {@link readTraceHeader} (a request must be for a resource it lists). */
  constructor(header: TraceHeader, options: ReadTraceOptions = {}) {
    this.header = header;
    this.maxLineBytes = options.maxLineBytes ?? MAX_TRACE_LINE_BYTES;
  }

  /** Reads line number `line` (2 or more). */
  check(text: string, line: number): TraceLine {
    const parsed = TraceLine.safeParse(parseLine(text, line, this.maxLineBytes));
    if (!parsed.success) throw new TraceFormatError(line, issueText(parsed.error.issues), parsed.error.issues);
    const record = parsed.data;
    if ((record.type === 'list' || record.type === 'watch') && Buffer.byteLength(text, 'utf8') > MAX_TRACE_REQUEST_LINE_BYTES)
      throw new TraceFormatError(line, `a ${record.type} request line longer than ${MAX_TRACE_REQUEST_LINE_BYTES} bytes`);
    if (this.stopped) throw new TraceFormatError(line, 'a line after the `stop` line');
    if (record.at < this.lastAt) throw new TraceFormatError(line, `time goes backwards (${record.at} ms after ${this.lastAt} ms)`);
    this.lastAt = record.at;
    if (record.type === 'stop') this.stopped = true;
    else this.request(record, line);
    return record;
  }

  private request(record: TraceRequestLine, line: number): void {
    if (record.type === 'list' || record.type === 'watch') {
      this.listed(record, line);
      if (this.seen.has(record.id)) throw new TraceFormatError(line, `request id ${record.id} used twice`);
      if (this.seen.size >= MAX_TRACE_REQUESTS) throw new TraceFormatError(line, `more than ${MAX_TRACE_REQUESTS} requests`);
      this.seen.add(record.id);
      this.open.set(record.id, record);
      if (record.type === 'list') this.chains(record, line);
      return;
    }
    const request = this.open.get(record.id);
    if (!request) throw new TraceFormatError(line, `${record.type} of request ${record.id}, which is not open`);
    if (record.type === 'page') {
      if (request.type !== 'list') throw new TraceFormatError(line, `a page of request ${record.id}, a watch`);
      const key = request.resource ?? '';
      if (record.continue) this.nextToken.set(key, record.continue);
      else this.nextToken.delete(key);
    }
    if (record.type === 'event' && request.type !== 'watch')
      throw new TraceFormatError(line, `a watch event of request ${record.id}, a list`);
    if (record.type === 'failure' || record.type === 'end') this.open.delete(record.id);
  }

  /** A request is for a resource the header lists: the one it names, or (naming none) the header's one. */
  private listed(record: TraceList | TraceWatch, line: number): void {
    const { resources } = this.header;
    if (record.resource !== undefined ? resources.includes(record.resource) : resources.length > 0) return;
    throw new TraceFormatError(
      line,
      `a ${record.type} request for ${record.resource ?? 'a resource'} the header does not list (it lists ${resources.join(', ') || 'none'})`,
    );
  }

  private chains(record: TraceList, line: number): void {
    const token = record.options.continue;
    if (token === undefined) return;
    const expected = this.nextToken.get(record.resource ?? '');
    if (expected !== token)
      throw new TraceFormatError(
        line,
        `pages do not chain: a list continues from "${token}", the last page gave ${expected === undefined ? 'no token' : `"${expected}"`}`,
      );
  }
}

/**
 * Reads a whole trace held in memory: header, then every line checked by {@link TraceChecker}. A file
 * whose last line has no newline was cut while it was written: an error, not a shorter trace.
 */
export function readTrace(text: string, options: ReadTraceOptions = {}): Trace {
  if (text.length === 0) throw new TraceFormatError(1, 'empty: no header');
  const rows = text.split('\n');
  const last = rows.pop();
  if (last !== '') throw new TraceFormatError(rows.length + 1, 'truncated: the last line has no newline');
  const header = readTraceHeader(rows[0] ?? '', options);
  const checker = new TraceChecker(header, options);
  const lines = rows.slice(1).map((row, i) => checker.check(row, i + 2));
  return { header, lines };
}

/** One line of JSON Lines: the record and its newline. */
export function traceLineText(record: TraceHeader | TraceLine): string {
  return `${JSON.stringify(record)}\n`;
}

/**
 * {@link traceLineText} in parts (the line is their concatenation), for a writer: a page's items are a part each, and a
 * lazily decoded object (a listed item, an event's object) is written by `jsonText`, its unread members as the text
 * they were read from, not parsed (the line reads as {@link traceLineText}'s once parsed; the object stays lazy).
 */
export function traceLineParts(record: TraceLine): string[] {
  if (record.type === 'page') {
    const { items, notice, ...head } = record;
    const parts = [`${JSON.stringify(head).slice(0, -1)},"items":[`];
    for (let i = 0; i < items.length; i++) parts.push(`${i === 0 ? '' : ','}${jsonText(items[i]) ?? 'null'}`);
    parts.push(notice === undefined ? ']}\n' : `],"notice":${JSON.stringify(notice)}}\n`);
    return parts;
  }
  if (
    record.type === 'event' &&
    typeof record.event.object === 'object' &&
    record.event.object !== null &&
    hasUnparsedMembers(record.event.object)
  ) {
    const {
      event: { object, ...event },
      ...head
    } = record;
    const text = jsonText(object);
    const events = JSON.stringify(event);
    const members = text === undefined ? events : `${events.slice(0, -1)}${events === '{}' ? '' : ','}"object":${text}}`;
    return [`${JSON.stringify(head).slice(0, -1)},"event":${members}}\n`];
  }
  return [traceLineText(record)];
}

/** A trace as the text of its file. */
export function traceText(trace: Trace): string {
  return [trace.header, ...trace.lines].map(traceLineText).join('');
}
