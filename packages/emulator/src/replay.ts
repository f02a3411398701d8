/**
 * Replay over HTTP (`startApiServer({ replay })`): list and watch requests for the resources of an
 * rx-informer trace are answered from it, in order and at their recorded offsets, in real time.
 *
 * The trace format is rx-informer's (JSON Lines, docs/testing.md in the rx-informer repository), read here on
 * its own: the emulator imports nothing of the library. Line 1 is a header (`format: "rx-informer-trace"`,
 * `version: 1`, `resources`); then `list`/`watch` request lines (`id`, `at`, `options`, optional `resource`) and
 * the lines of each request: `page`, `event`, `notice`, `failure`, `end`; a `stop` line may end it. Every line is
 * checked as it is read, by the library's reader's rules (./traceCheck.ts): a trace it refuses is refused here,
 * with its words.
 *
 * The n-th list or watch request for a recorded resource must be the n-th recorded one (same kind; the same
 * resourceVersion, resourceVersionMatch, limit, continue, allowWatchBookmarks and sendInitialEvents; a watch's
 * timeoutSeconds is the client's jitter and is not compared). A request that is not answers 500 with a Status
 * naming it and the recorded one, and every replayed request after it answers the same: nothing is
 * half-replayed silently. A recorded line that cannot be written again is a mismatch too, naming the line: a 500, or
 * a watch broken off (a guard: a line nested deep enough to overflow `JSON.stringify` is refused when read). Other
 * requests (discovery, writes) are the emulator's as usual.
 *
 * A trace given as `{ file }` is read in one pass of 1 MiB chunks that keeps, per line, where it is (offset and
 * length), its type and time; each page or event is read from the file again when it is played, so a long trace is
 * served in bounded memory. A line over 64 MiB is refused as it is read; a file changed after it was opened (its
 * size or mtime) breaks the request that reads it and is a mismatch.
 */
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { longTimeout, type LongTimeout } from './longTimeout.ts';
import { checkTraceHeader, MAX_TRACE_LINE_BYTES, parseTraceLine, TraceLineChecker, TraceLineError } from './traceCheck.ts';

interface Line {
  readonly type: string;
  readonly at: number;
  readonly id?: number;
  readonly resource?: string;
  readonly options?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

/** A line of a request's answer: where it is (and its number, 1-based), read when it is played. */
interface Outcome {
  readonly line: number;
  readonly at: number;
  readonly offset: number;
  readonly bytes: number;
}

interface Recorded {
  readonly kind: 'list' | 'watch';
  readonly options: Record<string, unknown>;
  readonly line: number;
  readonly at: number;
  readonly outcomes: Outcome[];
}

/** What a replaying server did: the requests it could not answer, the recorded ones not yet asked for. */
export interface ReplayState {
  readonly mismatches: readonly string[];
  readonly remaining: number;
}

/** A trace: its text, or a file read a line at a time. */
export type ReplayTrace = string | { readonly file: string };

const COMPARED = ['resourceVersion', 'resourceVersionMatch', 'limit', 'continue', 'allowWatchBookmarks', 'sendInitialEvents'];
const CHUNK_BYTES = 1024 * 1024;

/** Where the bytes of a trace are: `read(offset, bytes, into)` fills `into` and says how much it read. */
interface Bytes {
  read(offset: number, bytes: number, into: Buffer): number;
  /** Why it cannot be read as it was (a file changed), or undefined. */
  changed(): string | undefined;
  close(): void;
}

function bytesOf(trace: ReplayTrace): Bytes {
  if (typeof trace === 'string') {
    const buffer = Buffer.from(trace, 'utf8');
    return {
      read: (offset, bytes, into) => buffer.copy(into, 0, offset, offset + bytes),
      changed: () => undefined,
      close: () => undefined,
    };
  }
  const fd = openSync(trace.file, 'r');
  const opened: Stats = fstatSync(fd);
  return {
    read: (offset, bytes, into) => readSync(fd, into, 0, bytes, offset),
    changed: () => {
      const now = fstatSync(fd);
      return now.size === opened.size && now.mtimeMs === opened.mtimeMs
        ? undefined
        : `the trace file changed after it was opened (${opened.size} bytes then, ${now.size} now)`;
    },
    close: () => closeSync(fd),
  };
}

/** Calls `each(text, lineNo, offset, bytes)` for every line, read in chunks; a line over the limit is refused before it is held whole. */
function eachLine(source: Bytes, each: (text: string, lineNo: number, offset: number, bytes: number) => void): void {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let pieces: Buffer[] = [];
  let pending = 0;
  let position = 0;
  let lineNo = 1;
  for (let n = source.read(0, chunk.length, chunk); n > 0; n = source.read(position, chunk.length, chunk)) {
    const view = chunk.subarray(0, n);
    let from = 0;
    for (let newline = view.indexOf(10, from); ; newline = view.indexOf(10, from)) {
      const end = newline < 0 ? n : newline;
      if (pending + end - from > MAX_TRACE_LINE_BYTES) throw new TraceLineError(lineNo, `longer than ${MAX_TRACE_LINE_BYTES} bytes`);
      if (newline < 0) {
        pieces.push(Buffer.from(view.subarray(from)));
        pending += n - from;
        break;
      }
      const text = pieces.length ? Buffer.concat([...pieces, view.subarray(from, end)]).toString('utf8') : view.toString('utf8', from, end);
      each(text, lineNo++, position + from - pending, pending + end - from);
      pieces = [];
      pending = 0;
      from = newline + 1;
    }
    position += n;
  }
  if (pending > 0) throw new TraceLineError(lineNo, 'truncated: the last line has no newline');
}

/** Reads the trace once, every line checked as the library's reader checks it (./traceCheck.ts): what to replay. */
function parse(source: Bytes): { resources: readonly string[]; requests: Map<string, Recorded[]> } {
  let resources: readonly string[] | undefined;
  let checker: TraceLineChecker | undefined;
  const requests = new Map<string, Recorded[]>();
  const byId = new Map<number, Recorded>();
  eachLine(source, (text, lineNo, offset, bytes) => {
    const json = parseTraceLine(text, lineNo);
    if (lineNo === 1) {
      resources = checkTraceHeader(json);
      checker = new TraceLineChecker(resources);
      for (const r of resources) requests.set(r, []);
      return;
    }
    const line = checker!.check(json, bytes, lineNo);
    if (line.type === 'list' || line.type === 'watch') {
      const resource = line.resource ?? resources![0]!;
      const recorded: Recorded = { kind: line.type, options: line.options ?? {}, line: lineNo, at: line.at, outcomes: [] };
      requests.get(resource)?.push(recorded);
      byId.set(line.id!, recorded);
    } else if (line.id !== undefined) byId.get(line.id)?.outcomes.push({ line: lineNo, at: line.at, offset, bytes });
  });
  if (!resources) throw new TraceLineError(1, 'empty: no header');
  return { resources, requests };
}

/** `pods` or `deployments.apps`, and whether it is a watch, for a collection request; undefined for anything else. */
function target(req: IncomingMessage): { resource: string; watch: boolean; query: URLSearchParams } | undefined {
  if (req.method !== 'GET') return undefined;
  const url = new URL(req.url ?? '/', 'http://emulator');
  const core = /^\/api\/v1\/(?:namespaces\/[^/]+\/)?([^/]+)$/.exec(url.pathname);
  const named = /^\/apis\/([^/]+)\/[^/]+\/(?:namespaces\/[^/]+\/)?([^/]+)$/.exec(url.pathname);
  const resource = core ? core[1] : named ? `${named[2]}.${named[1]}` : undefined;
  if (!resource || (resource === 'namespaces' && !core)) return undefined;
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  return { resource, watch, query: url.searchParams };
}

function optionsOf(query: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of COMPARED) {
    const value = query.get(key);
    if (value === null || value === '') continue;
    out[key] = key === 'limit' ? Number(value) : value === 'true' ? true : value === 'false' ? false : value;
  }
  return out;
}

function comparable(options: Record<string, unknown>): string {
  return JSON.stringify(COMPARED.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]));
}

function statusBody(code: number, message: string, reason = 'InternalError'): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

/** Answers a failure line: the server's Status and code, or a broken connection when none was recorded. */
function fail(res: ServerResponse, error: Record<string, unknown>): void {
  const status = typeof error['status'] === 'number' ? error['status'] : undefined;
  if (status === undefined || res.headersSent) {
    res.destroy();
    return;
  }
  const retry = typeof error['retryAfterSeconds'] === 'number' ? { 'Retry-After': String(error['retryAfterSeconds']) } : {};
  const body =
    error['statusObject'] !== undefined ? JSON.stringify(error['statusObject']) : statusBody(status, String(error['message'] ?? ''));
  res.writeHead(status, { 'Content-Type': 'application/json', ...retry });
  res.end(body);
}

/** Reads one line of a request's answer; undefined (the response destroyed, the mismatch kept) when it cannot. */
type ReadLine = (outcome: Outcome) => Line | undefined;

/** Writes one recorded line on a response. */
function answerLine(line: Line, res: ServerResponse): void {
  if (line.type === 'page') {
    const metadata = {
      resourceVersion: line['resourceVersion'],
      ...(line['continue'] ? { continue: line['continue'] } : {}),
      ...(line['remainingItemCount'] !== undefined ? { remainingItemCount: line['remainingItemCount'] } : {}),
    };
    // The body first: a line that cannot be written leaves the response unanswered (see answerOrReport).
    const body = JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata, items: line['items'] });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(body);
  } else if (line.type === 'event') res.write(`${JSON.stringify(line['event'])}\n`);
  else if (line.type === 'notice')
    res.write('{"type":"MODIFIED","object":\n'); // a line the client cannot read
  else if (line.type === 'failure') fail(res, (line['error'] ?? {}) as Record<string, unknown>);
  else if (line.type === 'end' && line['how'] === 'complete') res.end();
  // `end` by `unsubscribe`: the recorded client aborted it; it stays open until this one does.
}

/**
 * Writes one recorded line on a response; a line that cannot be written (one nested so deep that `JSON.stringify`
 * overflows the stack) is a mismatch: a 500 naming it when nothing was sent yet, else the response destroyed.
 */
function answerOrReport(line: Line, lineNo: number, res: ServerResponse, report: (message: string) => string): void {
  try {
    answerLine(line, res);
  } catch (error) {
    const message = report(`replay: trace line ${lineNo} cannot be answered: ${error instanceof Error ? error.message : String(error)}`);
    if (res.headersSent) return void res.destroy();
    res.writeHead(500, { 'Content-Type': 'application/json' });
    res.end(statusBody(500, message));
  }
}

/** Plays one recorded request on a response, in real time from now: one timer at a time, each line read when it is due. */
function play(
  recorded: Recorded,
  res: ServerResponse,
  timers: Set<LongTimeout>,
  read: ReadLine,
  report: (message: string) => string,
): void {
  const start = Date.now();
  if (recorded.kind === 'watch') {
    // No Transfer-Encoding: Node chunks an HTTP/1.1 body of unknown length by itself, and HTTP/2 forbids the header.
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.flushHeaders();
  }
  let next = 0;
  let timer: LongTimeout | undefined;
  res.once('close', () => {
    if (timer) (timer.clear(), timers.delete(timer));
  });
  const schedule = () => {
    const outcome = recorded.outcomes[next];
    if (!outcome) return;
    const due = start + (outcome.at - recorded.at);
    // A gap between two lines may be longer than Node's timers take (24.8 days): longTimeout chains them.
    timer = longTimeout(() => {
      timers.delete(timer!);
      timer = undefined;
      // Everything due by now goes at once, in order.
      while (
        !res.destroyed &&
        next < recorded.outcomes.length &&
        start + (recorded.outcomes[next]!.at - recorded.at) <= Math.max(due, Date.now())
      ) {
        const outcome = recorded.outcomes[next++]!;
        const line = read(outcome);
        if (!line) return void res.destroy();
        answerOrReport(line, outcome.line, res, report);
      }
      if (!res.destroyed) schedule();
    }, due - Date.now());
    timers.add(timer);
  };
  schedule();
}

/** The replaying part of a server: `answer` takes the requests it replays (true) and leaves the rest (false). */
export function tracePlayer(trace: ReplayTrace): {
  answer(req: IncomingMessage, res: ServerResponse): boolean;
  state: ReplayState;
  close(): void;
} {
  const bytes = bytesOf(trace);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(bytes);
  } catch (error) {
    bytes.close();
    throw error;
  }
  const { resources, requests } = parsed;
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const read: ReadLine = (outcome) => {
    const changed = bytes.changed();
    const into = outcome.bytes <= buffer.length ? buffer : Buffer.allocUnsafe(outcome.bytes);
    try {
      if (changed) throw new Error(changed);
      if (bytes.read(outcome.offset, outcome.bytes, into) !== outcome.bytes) throw new Error('the trace file changed: a line is shorter');
      return JSON.parse(into.toString('utf8', 0, outcome.bytes)) as Line;
    } catch (error) {
      mismatches.push(`replay: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };
  const cursors = new Map<string, number>(resources.map((r) => [r, 0]));
  const mismatches: string[] = [];
  const timers = new Set<LongTimeout>();
  return {
    answer(req, res) {
      const t = target(req);
      if (!t || !cursors.has(t.resource)) return false;
      const index = cursors.get(t.resource)!;
      const recorded = requests.get(t.resource)?.[index];
      const asked = optionsOf(t.query);
      const kind = t.watch ? 'watch' : 'list';
      if (!mismatches.length && recorded && recorded.kind === kind && comparable(recorded.options) === comparable(asked)) {
        cursors.set(t.resource, index + 1);
        play(recorded, res, timers, read, (message) => (mismatches.push(message), message));
        return true;
      }
      if (!mismatches.length)
        mismatches.push(
          `replay: request #${index + 1} for ${t.resource}, ${kind} ${JSON.stringify(asked)}, is not in the trace` +
            (recorded
              ? ` (it has ${recorded.kind} ${JSON.stringify(recorded.options)} there, line ${recorded.line})`
              : ' (it has no more)'),
        );
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(statusBody(500, mismatches[0]!));
      return true;
    },
    state: {
      get mismatches() {
        return mismatches;
      },
      get remaining() {
        let left = 0;
        for (const [resource, list] of requests) left += list.length - (cursors.get(resource) ?? 0);
        return left;
      },
    },
    close() {
      for (const timer of timers) timer.clear();
      timers.clear();
      bytes.close();
    },
  };
}
