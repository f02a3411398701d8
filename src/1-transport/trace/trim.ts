/**
 * `trimTrace(trace, window)`: a window of a trace that still replays into a fresh informer.
 */
import { rawKey, rawResourceVersion } from '../../0-model/keys.ts';
import type { Trace, TraceLine, TraceList, TraceWatch } from './format.ts';

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
    if (!request?.options.continue) known.pending = new Map();
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

/**
 * The lines of `trace` between `fromMs` and `toMs`, as a trace a fresh informer replays: it begins with a
 * list answered by one page holding what the recorded informer knew at the cut (its objects, at the
 * resourceVersion its next watch resumes from), then the recorded lines from that watch on, times moved to
 * the cut. The cut moves on to the first watch request at or after `fromMs`, the one point where the
 * recorded informer had nothing under way. The informer must be made as the recorded one was; a trace of a
 * streaming list (`sendInitialEvents`) is not cut (an error says so).
 */
export function trimTrace(trace: Trace, window: TrimWindow = {}): Trace {
  const resources = trace.header.resources;
  const resource = window.resource ?? (resources.length === 1 ? resources[0] : undefined);
  if (resource === undefined) throw new Error(`trim: the trace holds ${resources.join(', ')}: say which resource to keep`);
  const requests = new Map<number, TraceList | TraceWatch>();
  const mine = trace.lines.filter((line) => {
    if (line.type === 'stop') return false;
    if (line.type === 'list' || line.type === 'watch') {
      if ((line.resource ?? resource) !== resource) return false;
      requests.set(line.id, line);
      return true;
    }
    return requests.has(line.id);
  });
  const firstList = mine.find((l): l is TraceList => l.type === 'list');
  if (!firstList) throw new Error(`trim: the trace has no list of ${resource}`);
  if (mine.some((l) => l.type === 'watch' && l.options.sendInitialEvents))
    throw new Error('trim: a trace of streaming lists (sendInitialEvents) cannot be cut yet');
  const from = window.fromMs ?? 0;
  const cutIndex = mine.findIndex((l) => l.type === 'watch' && l.at >= from);
  if (cutIndex < 0) throw new Error(`trim: no watch starts at or after ${from} ms: nothing to cut from`);
  const cut = mine[cutIndex] as TraceWatch;
  const known: Known = { objects: new Map(), resourceVersion: '', pending: undefined };
  for (const line of mine.slice(0, cutIndex)) fold(known, line, requests);
  const resumeAt = cut.options.resourceVersion ?? known.resourceVersion;
  const to = window.toMs ?? Infinity;
  const shift = (line: TraceLine): TraceLine => ({ ...line, at: line.at - cut.at });
  const kept = mine.slice(cutIndex).filter((l) => l.at <= to);
  const open = new Set<number>();
  for (const l of kept) {
    if (l.type === 'list' || l.type === 'watch') open.add(l.id);
    else if (l.type === 'failure' || l.type === 'end') open.delete(l.id);
  }
  const end = Math.min(to, trace.lines.at(-1)?.at ?? 0) - cut.at;
  const id = Math.max(...requests.keys()) + 1;
  const head: TraceLine[] = [
    { type: 'list', at: 0, id, options: firstList.options, ...(firstList.resource ? { resource: firstList.resource } : {}) },
    { type: 'page', at: 0, id, resourceVersion: resumeAt, items: [...known.objects.values()] },
    { type: 'end', at: 0, id, how: 'complete' },
  ];
  const tail: TraceLine[] = [...open].map((openId) => ({ type: 'end', at: end, id: openId, how: 'unsubscribe' }));
  return {
    header: { ...trace.header, resources: [resource], startedAt: new Date(Date.parse(trace.header.startedAt) + cut.at).toISOString() },
    lines: [...head, ...kept.map(shift), ...tail, { type: 'stop', at: end, why: 'closed' }],
  };
}
