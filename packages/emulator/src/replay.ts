/**
 * Replay over HTTP (`startApiServer({ replay })`): list and watch requests for the resources of an
 * rx-informer trace are answered from it, in order and at their recorded offsets, in real time.
 *
 * The trace format is rx-informer's (JSON Lines, docs/testing.md in the rx-informer repository), read here on
 * its own: the emulator imports nothing of the library. Line 1 is a header (`format: "rx-informer-trace"`,
 * `version: 1`, `resources`); then `list`/`watch` request lines (`id`, `at`, `options`, optional `resource`) and
 * the lines of each request: `page`, `event`, `notice`, `failure`, `end`; a `stop` line may end it.
 *
 * The n-th list or watch request for a recorded resource must be the n-th recorded one (same kind; the same
 * resourceVersion, resourceVersionMatch, limit, continue, allowWatchBookmarks and sendInitialEvents; a watch's
 * timeoutSeconds is the client's jitter and is not compared). A request that is not answers 500 with a Status
 * naming it and the recorded one, and every replayed request after it answers the same: nothing is
 * half-replayed silently. Other requests (discovery, writes) are the emulator's as usual.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

interface Line {
  readonly type: string;
  readonly at: number;
  readonly id?: number;
  readonly resource?: string;
  readonly options?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

interface Recorded {
  readonly kind: 'list' | 'watch';
  readonly options: Record<string, unknown>;
  readonly line: number;
  readonly at: number;
  readonly outcomes: Line[];
}

/** What a replaying server did: the requests it could not answer, the recorded ones not yet asked for. */
export interface ReplayState {
  readonly mismatches: readonly string[];
  readonly remaining: number;
}

const COMPARED = ['resourceVersion', 'resourceVersionMatch', 'limit', 'continue', 'allowWatchBookmarks', 'sendInitialEvents'];

function parse(text: string): { resources: string[]; requests: Map<string, Recorded[]> } {
  const rows = text.split('\n');
  if (rows.pop() !== '') throw new Error('replay: the trace is truncated (its last line has no newline)');
  const lines = rows.map((row, i) => {
    try {
      return JSON.parse(row) as Line;
    } catch {
      throw new Error(`replay: trace line ${i + 1} is not JSON`);
    }
  });
  const header = lines[0] as { format?: unknown; version?: unknown; resources?: unknown } | undefined;
  if (header?.format !== 'rx-informer-trace' || header.version !== 1 || !Array.isArray(header.resources))
    throw new Error('replay: line 1 is not an rx-informer-trace header of version 1');
  const resources = header.resources.map(String);
  const requests = new Map<string, Recorded[]>(resources.map((r) => [r, []]));
  const byId = new Map<number, Recorded>();
  lines.slice(1).forEach((line, i) => {
    if (line.type === 'list' || line.type === 'watch') {
      const resource = line.resource ?? resources[0] ?? '';
      const recorded: Recorded = { kind: line.type, options: line.options ?? {}, line: i + 2, at: line.at, outcomes: [] };
      requests.get(resource)?.push(recorded);
      byId.set(line.id ?? -1, recorded);
    } else if (line.id !== undefined) byId.get(line.id)?.outcomes.push(line);
  });
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

/** Plays one recorded request on a response, in real time from now. */
function play(recorded: Recorded, res: ServerResponse, timers: Set<NodeJS.Timeout>): void {
  const start = Date.now();
  if (recorded.kind === 'watch') {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
  }
  const at = (line: Line, run: () => void) => {
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (!res.destroyed) run();
      },
      Math.max(0, start + (line.at - recorded.at) - Date.now()),
    );
    timers.add(timer);
    res.once('close', () => clearTimeout(timer));
  };
  for (const line of recorded.outcomes) {
    at(line, () => {
      if (line.type === 'page') {
        const metadata = {
          resourceVersion: line['resourceVersion'],
          ...(line['continue'] ? { continue: line['continue'] } : {}),
          ...(line['remainingItemCount'] !== undefined ? { remainingItemCount: line['remainingItemCount'] } : {}),
        };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata, items: line['items'] }));
      } else if (line.type === 'event') res.write(`${JSON.stringify(line['event'])}\n`);
      else if (line.type === 'notice')
        res.write('{"type":"MODIFIED","object":\n'); // a line the client cannot read
      else if (line.type === 'failure') fail(res, (line['error'] ?? {}) as Record<string, unknown>);
      else if (line.type === 'end' && line['how'] === 'complete') res.end();
      // `end` by `unsubscribe`: the recorded client aborted it; it stays open until this one does.
    });
  }
}

/** The replaying part of a server: `answer` takes the requests it replays (true) and leaves the rest (false). */
export function tracePlayer(text: string): {
  answer(req: IncomingMessage, res: ServerResponse): boolean;
  state: ReplayState;
  close(): void;
} {
  const { resources, requests } = parse(text);
  const cursors = new Map<string, number>(resources.map((r) => [r, 0]));
  const mismatches: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
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
        play(recorded, res, timers);
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
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
