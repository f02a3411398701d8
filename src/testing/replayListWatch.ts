/**
 * `replayListWatch(trace)`: a ListWatch that answers an informer's requests from a recorded trace,
 * in virtual time (see `record` in rx-informer/pipeline and docs/testing.md).
 */
import { NEVER, Observable, ReplaySubject, Subscription, asyncScheduler, throwError, type SchedulerLike } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { isDeepStrictEqual } from 'node:util';
import { InformerError } from '../0-model/errors.ts';
import { typeMetaOf } from '../0-model/metadata.ts';
import { builtinResource } from '../0-model/resources.ts';
import type { ListOptions, ListPage, ListWatch, WatchFrame, WatchOptions } from '../1-transport/listWatch.ts';
import {
  canonicalOptions,
  informerErrorOf,
  readTrace,
  type Trace,
  type TraceList,
  type TraceRequestLine,
  type TraceWatch,
} from '../1-transport/trace/format.ts';
import { asTraceSource, traceSource, type TraceSource } from '../1-transport/trace/reader.ts';
import { scheduleAfter } from '../util/scheduleAfter.ts';

export interface ReplayOptions {
  /**
   * The clock frames are played on: the informer's (a `TestScheduler`). Default `monotonicScheduler`
   * (`asyncScheduler`'s timers, a monotonic clock: src/util/monotonicNow.ts).
   */
  readonly scheduler?: SchedulerLike;
  /** The resource to replay, when the trace holds several (its name in the header's `resources`). */
  readonly resource?: string;
  /**
   * `request` (default): what a request got comes at its recorded offset from the request, however soon the
   * informer asks. `recorded`: never before its recorded time from the replay's start either, so a replaying
   * informer that asks sooner (a shorter backoff) sees the changes at the recorded times (`rx-informer replay`).
   */
  readonly timeline?: 'request' | 'recorded';
}

/** A request of the informer the trace could not answer. */
export interface ReplayMismatch {
  readonly message: string;
  /** 0-based position of the request among the informer's requests. */
  readonly index: number;
}

/** A {@link ListWatch} playing a trace, and what it could not play. */
export interface ReplayListWatch extends ListWatch {
  /**
   * Requests the trace could not answer (the first fails with the message, later ones hang), and requests
   * the informer aborted before the recorded client did (what the trace holds after that was not played).
   */
  readonly mismatches: readonly ReplayMismatch[];
  /** Recorded requests not yet asked for. */
  readonly remaining: number;
  /**
   * Emits once when every recorded request has been asked for and played to its recorded end (a
   * request the client aborted in the recording stays open), then completes: the time to stop.
   */
  readonly finished$: Observable<void>;
}

/** One recorded request and the lines that came of it (their positions in the source, read when played). */
interface Played {
  readonly request: TraceList | TraceWatch;
  /** 1-based line number of the request in the file. */
  readonly line: number;
  readonly outcomes: readonly number[];
}

/**
 * Every source's requests by resource, found in one pass and kept with the source: replaying each of a trace's resources
 * (as `rx-informer replay` does) scanned the whole trace once per resource, resources × lines (audit24). A request
 * naming no resource is every resource's (a trace of one resource need not name it). Read-only once made.
 */
const indexed = new WeakMap<TraceSource, ReadonlyMap<string, readonly Played[]>>();

function byResource(source: TraceSource): ReadonlyMap<string, readonly Played[]> {
  const known = indexed.get(source);
  if (known) return known;
  const index = new Map<string, Played[]>(source.header.resources.map((r) => [r, []]));
  const byId = new Map<number, { request: TraceList | TraceWatch; line: number; outcomes: number[] }>();
  for (let i = 0; i < source.length; i++) {
    const request = source.requestAt(i);
    if (request) {
      const played = { request, line: i + 2, outcomes: [] };
      byId.set(request.id, played);
      if (request.resource === undefined) for (const list of index.values()) list.push(played);
      else index.get(request.resource)?.push(played);
    } else if (source.typeOf(i) !== 'stop') byId.get(source.idOf(i))?.outcomes.push(i);
  }
  indexed.set(source, index);
  return index;
}

function requestsOf(source: TraceSource, resource: string | undefined): readonly Played[] {
  const resources = source.header.resources;
  if (resource === undefined && resources.length > 1)
    throw new Error(`replayListWatch: the trace holds ${resources.join(', ')}: say which with the resource option`);
  if (resource !== undefined && !resources.includes(resource))
    throw new Error(`replayListWatch: the trace holds ${resources.join(', ') || 'no resource'}, not ${resource}`);
  const name = resource ?? resources[0];
  return name === undefined ? [] : (byResource(source).get(name) ?? []);
}

/**
 * The options a replayed request must match: all but `timeoutSeconds`, which the informer draws at random
 * (jitter) and only the server reads; the trace says when the server ended the watch.
 */
function matched(options: ListOptions | WatchOptions): Record<string, unknown> {
  const { timeoutSeconds: _jitter, ...rest } = canonicalOptions(options);
  return rest;
}

function describe(kind: string, options: ListOptions | WatchOptions): string {
  return `${kind} ${JSON.stringify(canonicalOptions(options))}`;
}

/** The recorded request nearest to a missed one: the next of its kind with the same options, else the next of its kind. */
function nearest(requests: readonly Played[], from: number, kind: string, options: Record<string, unknown>): string {
  const candidates = requests.slice(from).filter((p) => p.request.type === kind);
  const same = candidates.find((p) => isDeepStrictEqual(matched(p.request.options), options));
  const pick = same ?? candidates[0] ?? requests[from];
  if (!pick) return 'the trace has no request left';
  const skipped = requests.indexOf(pick) - from;
  return (
    `the nearest recorded one is ${describe(pick.request.type, pick.request.options)} (line ${pick.line}` +
    `${skipped > 0 ? `, after ${skipped} other request(s) the informer did not make` : ''})`
  );
}

/**
 * What names a replayed request in its faults (`InformerError.request`, an `ERROR` event's `request`), as the HTTP
 * transport names a live one (`watch /api/v1/pods`): the verb and what the trace knows of the target, its resource,
 * and where it is recorded (`watch pods (trace line 5)`; a trace holds no paths).
 */
function requestName(played: Played, header: TraceSource['header']): string {
  const resource = played.request.resource ?? header.resources[0] ?? 'the resource';
  return `${played.request.type} ${resource} (trace line ${played.line})`;
}

/**
 * A recorded line as the live transport would have given it, its faults named by `request`: a failure, an `ERROR`
 * event and a watch's error frame carry it; a `NotAcceptable` notice does not (the transport's does not either).
 */
function named(frame: ListPage | WatchFrame | undefined, request: string): ListPage | WatchFrame | undefined {
  if (frame instanceof InformerError) return frame.reason === 'NotAcceptable' ? frame : frame.forRequest(request);
  if (frame && 'type' in frame && frame.type === 'ERROR') return { type: frame.type, object: frame.object, request };
  return frame;
}

function frameOf(line: TraceRequestLine): ListPage | WatchFrame | undefined {
  switch (line.type) {
    case 'page': {
      const { resourceVersion, items } = line;
      return {
        items,
        resourceVersion,
        ...(line.continue === undefined ? {} : { continue: line.continue }),
        ...(line.remainingItemCount === undefined ? {} : { remainingItemCount: line.remainingItemCount }),
        ...(line.notice === undefined ? {} : { notice: informerErrorOf(line.notice) }),
      };
    }
    case 'event':
      return { type: line.event.type, object: line.event.object };
    case 'notice':
      return informerErrorOf(line.error);
    default:
      return undefined;
  }
}

interface TypeMeta {
  readonly apiVersion: string;
  readonly kind: string;
}

/** The apiVersion and kind of a replayed request's objects, when its resource is a built-in one. */
function recordedTypeMeta(played: Played, header: TraceSource['header']): TypeMeta | undefined {
  const resource = played.request.resource ?? header.resources[0];
  // A built-in list's items carry no apiVersion or kind (a custom resource's and a metadata-only list's carry theirs).
  const builtin = resource === undefined ? undefined : builtinResource(resource);
  return builtin && typeMetaOf(builtin);
}

/**
 * A list's items with the trace's resource's apiVersion and kind where they have none (completed in place, as the
 * informer's decoder completes them): so an informer of another resource than the trace's reports each of them
 * (`ValidationFailed`: "is a v1 ConfigMap, not an apps/v1 Deployment; skipped"), as it does the watch events,
 * instead of caching them as its own.
 */
function typed(items: readonly unknown[], typeMeta: TypeMeta | undefined): void {
  if (typeMeta === undefined) return;
  for (const item of items) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const o = item as { apiVersion?: unknown; kind?: unknown };
    if (o.apiVersion === undefined) o.apiVersion = typeMeta.apiVersion;
    if (o.kind === undefined) o.kind = typeMeta.kind;
  }
}

/** What a request is played with: the clock, the source, and where to say how it went. */
interface Stage {
  readonly clock: SchedulerLike;
  /** With `timeline: 'recorded'`: the replay's start on the clock. */
  readonly origin: number | undefined;
  readonly source: TraceSource;
  /** The request is over (played to its end, failed, or aborted). */
  readonly done: () => void;
  /** The informer aborted it sooner than the recorded client did (`when`: where). */
  readonly aborted: (when: string) => void;
  /** A line of it could not be read (the file changed). */
  readonly broken: (message: string) => void;
}

/** Plays one recorded request: its lines, read one at a time, at their offsets from the subscription; its end as recorded. */
function play<V>(played: Played, { clock, origin, source, done, aborted, broken }: Stage): Observable<V> {
  return new Observable<V>((subscriber) => {
    const start = clock.now();
    const request = requestName(played, source.header);
    const typeMeta = recordedTypeMeta(played, source.header);
    const after = (i: number) => source.atOf(i) - played.request.at;
    // 'request': at its offset from the request; 'recorded': not before its recorded time either.
    const due = (i: number) => Math.max(start + after(i), origin === undefined ? 0 : origin + source.atOf(i));
    const outcomes = played.outcomes;
    let next = 0;
    const read = (i: number): TraceRequestLine | undefined => {
      try {
        return source.read(i) as TraceRequestLine;
      } catch (error) {
        const message = `replay: ${error instanceof Error ? error.message : String(error)}`;
        next = outcomes.length;
        broken(message);
        done();
        subscriber.error(new InformerError('Config', message, { phase: played.request.type }));
        return undefined;
      }
    };
    const run = (): void => {
      // Everything recorded at the same offset goes at once, in order.
      const now = after(outcomes[next]!);
      while (next < outcomes.length && after(outcomes[next]!) === now) {
        const line = read(outcomes[next++]!);
        if (!line) return;
        if (line.type === 'failure') {
          done();
          subscriber.error(informerErrorOf(line.error).forRequest(request));
          return;
        }
        if (line.type === 'end') {
          done();
          if (line.how === 'complete') subscriber.complete();
          return; // 'unsubscribe': the client aborted it; it stays open until the client does so again
        }
        if (line.type === 'page') typed(line.items, typeMeta);
        subscriber.next(named(frameOf(line), request) as V);
      }
      const following = outcomes[next];
      if (following !== undefined) timer = scheduleAfter(clock, run, Math.max(0, due(following) - clock.now()));
      else done();
    };
    // One timer at a time, the next line's (not one kept per line played: a long watch would keep them all).
    let timer: Subscription | undefined;
    const subscription = new Subscription(() => timer?.unsubscribe());
    const first = outcomes[0];
    if (first !== undefined) timer = scheduleAfter(clock, run, due(first) - start);
    else done();
    // The client aborting it ends it, as a recorded `unsubscribe` does; sooner than the recorded client did is a divergence.
    subscription.add(() => {
      const left = outcomes[next];
      if (left !== undefined && source.typeOf(left) !== 'end')
        aborted(
          `${clock.now() - start} ms after it, before line ${left + 2} (its ${source.typeOf(left)} ${after(left)} ms after it): ` +
            'the recorded client did not abort it there',
        );
      done();
    });
    return subscription;
  });
}

/**
 * A ListWatch that answers requests from a trace, in order: the n-th request the informer makes must
 * be the n-th recorded one (same kind, same options but for a watch's `timeoutSeconds`, the informer's
 * jitter: the trace says when the server ended it); it gets the recorded pages, frames, failure
 * and end, each at its recorded offset from the request's start, on `scheduler`. So
 * `informer(replayListWatch(trace, { scheduler }), Pod, { scheduler, …the recorded options })` under
 * a `TestScheduler` does what the recorded informer did, event for event.
 *
 * A request the trace cannot answer fails with an error naming it and the nearest recorded request,
 * and is kept in `mismatches`; every later request hangs, so nothing is half-replayed silently.
 * `trace` is a {@link Trace}, the text of a trace file, or a trace file opened with `openTrace(path)`, whose pages
 * and frames are read from the file one line at a time as they are played (a long trace in bounded memory).
 */
export function replayListWatch(trace: Trace | TraceSource | string, options: ReplayOptions = {}): ReplayListWatch {
  const clock = options.scheduler ?? monotonicScheduler;
  const origin = options.timeline === 'recorded' ? clock.now() : undefined;
  const source = typeof trace === 'string' ? traceSource(readTrace(trace)) : asTraceSource(trace);
  const requests = requestsOf(source, options.resource);
  const mismatches: ReplayMismatch[] = [];
  const finished = new ReplaySubject<void>(1);
  let cursor = 0;
  let playing = 0;
  if (requests.length === 0) {
    finished.next();
    finished.complete();
  }
  const settle = () => {
    // Nothing playing: the file is closed until the next request.
    if (--playing === 0) source.release();
    if (playing === 0 && cursor === requests.length && mismatches.length === 0) {
      finished.next();
      finished.complete();
    }
  };

  function answer<V>(kind: 'list' | 'watch', given: ListOptions | WatchOptions): Observable<V> {
    if (mismatches.length) return NEVER;
    const index = cursor;
    const options = matched(given);
    const recorded = requests[index];
    if (recorded && recorded.request.type === kind && isDeepStrictEqual(matched(recorded.request.options), options)) {
      cursor++;
      playing++;
      let settled = false;
      return play<V>(recorded, {
        clock,
        origin,
        source,
        done: () => {
          if (!settled) ((settled = true), settle());
        },
        aborted: (when) =>
          mismatches.push({
            message: `replay: the informer aborted its request #${index + 1}, ${describe(kind, given)} (line ${recorded.line}), ${when}`,
            index,
          }),
        broken: (message) => mismatches.push({ message, index }),
      });
    }
    const message =
      `replay: the informer's request #${index + 1}, ${describe(kind, given)}, is not in the trace` +
      (recorded
        ? ` (the trace's request #${index + 1} is ${describe(recorded.request.type, recorded.request.options)}, line ${recorded.line})`
        : '') +
      `; ${nearest(requests, index, kind, options)}`;
    mismatches.push({ message, index });
    return throwError(() => new InformerError('Config', message, { phase: kind }));
  }

  return {
    list: (o) => answer<ListPage>('list', o),
    watch: (o) => answer<WatchFrame>('watch', o),
    get mismatches() {
      return mismatches;
    },
    get remaining() {
      return requests.length - cursor;
    },
    finished$: finished.asObservable(),
  };
}
