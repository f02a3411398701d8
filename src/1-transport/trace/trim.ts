/**
 * `trimTrace(trace, window)`: a window of a trace that still replays into a fresh informer; `writeTrimmedTrace`
 * the same from a {@link TraceSource}, a line at a time (a trace opened with `openTrace` is never held whole).
 */
import { rawKey, rawResourceVersion } from '../../0-model/keys.ts';
import type { Trace, TraceHeader, TraceLine, TraceList, TraceWatch } from './format.ts';
import { traceSource, type TraceSource } from './reader.ts';

export interface TrimWindow {
  /** Start here (ms into the recording); the cut moves on to the first watch request at or after it. Default 0. */
  readonly fromMs?: number;
  /** End here: later lines are left out, requests still open end as aborted (`unsubscribe`). Default: the end. */
  readonly toMs?: number;
  /** The resource to keep, when the trace holds several. */
  readonly resource?: string;
}

/** What the recorded informer knew at a point: its objects by key and the resourceVersion it had reached. */
interface Known {
  readonly objects: Map<string, unknown>;
  resourceVersion: string;
  /** Items of a paged list under way (replacing `objects` when its last page comes). */
  pending: Map<string, unknown> | undefined;
}

function fold(known: Known, line: TraceLine, requests: ReadonlyMap<number, TraceList | TraceWatch>): void {
  if (line.type === 'page') {
    const request = requests.get(line.id);
    if (request?.type !== 'list' || !request.options.continue) known.pending = new Map();
    for (const item of line.items) known.pending?.set(rawKey(item) ?? '', item);
    if (line.continue) return;
    known.objects.clear();
    for (const [key, item] of known.pending ?? []) known.objects.set(key, item);
    known.pending = undefined;
    known.resourceVersion = line.resourceVersion;
  } else if (line.type === 'event') {
    const { type, object } = line.event;
    if (type === 'ERROR') return;
    const rv = rawResourceVersion(object);
    if (rv !== undefined) known.resourceVersion = rv;
    const key = rawKey(object);
    if (key === undefined || type === 'BOOKMARK') return;
    if (type === 'DELETED') known.objects.delete(key);
    else known.objects.set(key, object);
  }
}

/** Where a window starts, found from the index alone (no page or event read). */
interface Cut {
  readonly resource: string;
  /** Positions of the lines of the resource's requests. */
  readonly mine: readonly number[];
  readonly requests: ReadonlyMap<number, TraceList | TraceWatch>;
  readonly firstList: TraceList;
  /** Index into `mine` of the watch the window starts with. */
  readonly at: number;
  readonly watch: TraceWatch;
}

function findCut(source: TraceSource, window: TrimWindow): Cut {
  const resources = source.header.resources;
  const resource = window.resource ?? (resources.length === 1 ? resources[0] : undefined);
  if (resource === undefined) throw new Error(`trim: the trace holds ${resources.join(', ')}: say which resource to keep`);
  const requests = new Map<number, TraceList | TraceWatch>();
  const mine: number[] = [];
  for (let i = 0; i < source.length; i++) {
    const request = source.requestAt(i);
    if (request && (request.resource ?? resource) === resource) requests.set(request.id, request);
    if (request ? requests.has(request.id) : source.typeOf(i) !== 'stop' && requests.has(source.idOf(i))) mine.push(i);
  }
  const firstList = [...requests.values()].find((l): l is TraceList => l.type === 'list');
  if (!firstList) throw new Error(`trim: the trace has no list of ${resource}`);
  if ([...requests.values()].some((l) => l.type === 'watch' && l.options.sendInitialEvents))
    throw new Error('trim: a trace of streaming lists (sendInitialEvents) cannot be cut yet');
  const from = window.fromMs ?? 0;
  const at = mine.findIndex((i) => source.typeOf(i) === 'watch' && source.atOf(i) >= from);
  if (at < 0) {
    const starts = mine.filter((i) => source.typeOf(i) === 'watch').map((i) => `${source.atOf(i)} ms`);
    const known =
      starts.length === 0 ? 'it has none' : `its watches start at ${starts.slice(0, 5).join(', ')}${starts.length > 5 ? ', …' : ''}`;
    throw new Error(`trim: no watch of ${resource} starts at or after ${from} ms (${known}): nothing to cut from`);
  }
  return { resource, mine, requests, firstList, at, watch: source.requestAt(mine[at]!) as TraceWatch };
}

/** Why `window` is no window of `source` (`toMs` before `fromMs`, or before the cut), or undefined; throws as `writeTrimmedTrace`. */
export function trimWindowProblem(source: TraceSource, window: TrimWindow): string | undefined {
  const from = window.fromMs ?? 0;
  const to = window.toMs;
  if (to === undefined) return undefined;
  if (to < from) return `trim: the window ends (--to ${to} ms) before it starts (--from ${from} ms)`;
  const { watch } = findCut(source, window);
  if (to < watch.at)
    return (
      `trim: the window ends (--to ${to} ms) before its cut, the first watch at or after --from (${from} ms), ` +
      `which starts at ${watch.at} ms: nothing to keep`
    );
  return undefined;
}

/**
 * The lines of `source` between `fromMs` and `toMs`, as a trace a fresh informer replays, handed to `write` one at a
 * time (header first): it begins with a list answered by one page holding what the recorded informer knew at the cut
 * (its objects, at the resourceVersion its next watch resumes from), then the recorded lines from that watch on,
 * times moved to the cut. The cut moves on to the first watch request at or after `fromMs`, the one point where the
 * recorded informer had nothing under way; a `toMs` before the cut (or before `fromMs`) is an error (see
 * {@link trimWindowProblem}), before anything is written. The informer must be made as the recorded one was; a trace of a
 * streaming list (`sendInitialEvents`) is not cut (an error says so, before anything is written). What is held:
 * the objects known at the cut, and one line.
 */
export function writeTrimmedTrace(source: TraceSource, window: TrimWindow, write: (line: TraceHeader | TraceLine) => void): void {
  const problem = trimWindowProblem(source, window);
  if (problem !== undefined) throw new Error(problem);
  const { resource, mine, requests, firstList, at: cutIndex, watch: cut } = findCut(source, window);
  const known: Known = { objects: new Map(), resourceVersion: '', pending: undefined };
  for (const i of mine.slice(0, cutIndex)) {
    const type = source.typeOf(i);
    if (type === 'page' || type === 'event') fold(known, source.read(i), requests);
  }
  const resumeAt = cut.options.resourceVersion ?? known.resourceVersion;
  const to = window.toMs ?? Infinity;
  const kept = mine.slice(cutIndex).filter((i) => source.atOf(i) <= to);
  const open = new Set<number>();
  for (const i of kept) {
    const type = source.typeOf(i);
    if (type === 'list' || type === 'watch') open.add(source.idOf(i));
    else if (type === 'failure' || type === 'end') open.delete(source.idOf(i));
  }
  const end = Math.min(to, source.length ? source.atOf(source.length - 1) : 0) - cut.at;
  const id = [...requests.keys()].reduce((a, b) => Math.max(a, b), 0) + 1;
  const { header } = source;
  write({ ...header, resources: [resource], startedAt: new Date(Date.parse(header.startedAt) + cut.at).toISOString() });
  write({ type: 'list', at: 0, id, options: firstList.options, ...(firstList.resource ? { resource: firstList.resource } : {}) });
  write({ type: 'page', at: 0, id, resourceVersion: resumeAt, items: [...known.objects.values()] });
  write({ type: 'end', at: 0, id, how: 'complete' });
  known.objects.clear();
  for (const i of kept) write({ ...source.read(i), at: source.atOf(i) - cut.at });
  for (const openId of open) write({ type: 'end', at: end, id: openId, how: 'unsubscribe' });
  write({ type: 'stop', at: end, why: 'closed' });
  source.release();
}

/** {@link writeTrimmedTrace} of a trace in memory, into a trace in memory. */
export function trimTrace(trace: Trace, window: TrimWindow = {}): Trace {
  let header: TraceHeader | undefined;
  const lines: TraceLine[] = [];
  writeTrimmedTrace(traceSource(trace), window, (line) => {
    if (line.type === 'header') header = line;
    else lines.push(line);
  });
  return { header: header!, lines };
}
