/**
 * A simulated kube-apiserver for one resource (ConfigMaps, all namespaces),
 * as an in-memory {@link ListWatch} whose responses are scheduled on an RxJS
 * scheduler: with a VirtualTimeScheduler shared with the informer, minutes of
 * server behaviour run in milliseconds and every timing is exact.
 *
 * What it models, after spec/fixtures/kube-apiserver-v1.20/README.md and the
 * apiserver's cacher:
 * - one global resourceVersion counter with gaps (other resources write too);
 * - a watch-cache window (at least 100 events, and every event younger than
 *   75 s): a watch from before it gets HTTP 200 and one ERROR 410 event (04a, 04d);
 * - etcd compaction every 5 min: an Exact or paged list at a compacted
 *   resourceVersion, or a continue token older than it, gets 410 (04f, 04h, 04i);
 * - lists: `""` is a consistent read, paged with `limit`/`continue`; `"0"` is
 *   served from the cache, whole, `limit` ignored (02h); a resourceVersion with
 *   no limit is NotOlderThan, served from the cache at its latest (04j);
 * - watches from a resourceVersion replay the window after it, then stream live;
 * - bookmarks every 60 s once the type changed after the watch's start, and one
 *   1.5–2.5 s before `timeoutSeconds`, when the server ends the watch cleanly (03b, 03c);
 * - a resourceVersion newer than the server's: 504 "Too large resource version"
 *   after the cacher's 3 s wait (an ERROR event on a watch, an HTTP error on a list);
 * - latencies of a few ms; events keep their order on a connection;
 * - the HTTP transport's `requestTimeoutMs` (30 s without response headers: a `Timeout`), for the
 *   requests it black-holes (the transport's timer is a Node timer, not the informer's scheduler,
 *   so it is modelled here, on the virtual clock, as httpTransport reports it).
 *
 * Faults are injected through the methods under "faults" below; every request
 * and fault is traced with its virtual time.
 */
import { Observable, Subscription, type SchedulerAction, type SchedulerLike, type Subscriber } from 'rxjs';
import { InformerError, errorFromStatus } from '../../../src/0-model/errors.ts';
import type { ListOptions, ListPage, ListWatch, RawWatchEvent, WatchFrame, WatchOptions } from '../../../src/1-transport/listWatch.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../../src/1-transport/httpTransport.ts';
import { Rng } from './random.ts';

export const NAMESPACES = ['default', 'ns-a', 'ns-b'] as const;

/** Server behaviour (ms unless said otherwise). */
export const SERVER = {
  bookmarkEveryMs: 60_000,
  /** The last bookmark comes this long before the deadline (03b: 1.4 s and 2.5 s). */
  finalBookmarkMs: [1_500, 2_500],
  windowEvents: 100,
  windowFreshMs: 75_000,
  compactEveryMs: 300_000,
  /** The cacher waits this long for a resourceVersion it has not reached, then answers 504. */
  tooLargeWaitMs: 3_000,
  /** A watch without timeoutSeconds lasts this long (min-request-timeout). */
  defaultWatchTimeoutSeconds: 1_800,
} as const;

/** Network and server latencies (ms). */
export const LATENCY = {
  /** From the client's request to the server. */
  uplinkMs: 1,
  errorMs: [1, 3],
  listMs: [3, 12],
  listPerItemMs: 0.02,
  /** From a write to its event on an open watch. */
  eventMs: [1, 4],
  /** From an ERROR event to the end of the response (04a: within 30 ms). */
  closeAfterErrorMs: [2, 20],
} as const;

/** The longest a list takes here (bounds that say "+ one list" use it). */
export const ONE_LIST_MS = 50;

/** A stored object: what the server knows of one ConfigMap. */
interface Stored {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly rv: number;
  readonly created: string;
  readonly rev: number;
}

interface LoggedEvent {
  readonly rv: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly key: string;
  /** The object as the event carries it (a DELETED event: the last state at the deletion's rv). */
  readonly object: Stored;
  readonly at: number;
}

/** One request, as the server saw it. */
export interface SimRequest {
  readonly seq: number;
  readonly kind: 'list' | 'watch';
  readonly options: ListOptions | WatchOptions;
  readonly at: number;
  /** What the server answered. */
  outcome: string;
  /** Watch frames delivered. */
  frames: number;
  endedAt: number | undefined;
  end: 'complete' | 'error' | 'abort' | undefined;
}

/** What a fault may do to an open watch. */
export interface WatchHandle {
  readonly request: SimRequest;
  /** The resourceVersion the watch started from. */
  readonly startRV: number;
  /** The connection breaks: the client sees a NetworkError. */
  drop(message: string): void;
  /** Nothing more is sent, and the connection stays open. */
  stall(): void;
  /** The server ends the response cleanly after what is in flight. */
  close(): void;
  /** One ERROR event carrying this Status, then the end of the response. */
  errorEvent(status: KubeStatusBody): void;
}

export interface KubeStatusBody {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure';
  readonly message: string;
  readonly reason?: string;
  readonly details?: unknown;
  readonly code: number;
}

function status(code: number, reason: string | undefined, message: string, details?: unknown): KubeStatusBody {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason ? { reason } : {}),
    ...(details ? { details } : {}),
    code,
  };
}

/** The Status a 1.20+ apiserver sends for 429, 500, 503 (apimachinery's NewTooManyRequests / NewInternalError / NewServiceUnavailable). */
export function failureStatus(code: number, retryAfterSeconds?: number): KubeStatusBody {
  if (code === 429)
    return status(
      429,
      'TooManyRequests',
      'Too many requests, please try again later.',
      retryAfterSeconds ? { retryAfterSeconds } : undefined,
    );
  if (code === 503)
    return status(
      503,
      'ServiceUnavailable',
      'the server is currently unable to handle the request',
      retryAfterSeconds ? { retryAfterSeconds } : undefined,
    );
  return status(code, 'InternalError', 'Internal error occurred: etcdserver: request timed out', {
    causes: [{ message: 'etcdserver: request timed out' }],
  });
}

/** storage.NewTooLargeResourceVersionError(requested, current, 1): a Timeout whose cause says "Too large resource version". */
export function tooLargeStatus(requested: number, current: number): KubeStatusBody {
  return status(504, 'Timeout', `Timeout: Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

function tooOldStatus(requested: number, floor: number): KubeStatusBody {
  return status(410, 'Expired', `too old resource version: ${requested} (${floor})`);
}

const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

function wire(object: Stored, typeMeta: boolean): Record<string, unknown> {
  // A fresh object every time: decoders complete objects in place.
  return {
    ...(typeMeta ? { kind: 'ConfigMap', apiVersion: 'v1' } : {}),
    metadata: {
      name: object.name,
      namespace: object.namespace,
      uid: object.uid,
      resourceVersion: String(object.rv),
      creationTimestamp: object.created,
    },
    data: { rev: String(object.rev) },
  };
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${start}\u0000` })).toString('base64url');
}

function decodeContinue(token: string): { rv: number; start: string } | undefined {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof value.rv !== 'number' || typeof value.start !== 'string') return undefined;
    return { rv: value.rv, start: value.start.replace(/\u0000$/, '') };
  } catch {
    return undefined;
  }
}

/** Parses a resourceVersion the way the apiserver does: "" and undefined are none, else a positive integer. */
function parseRV(rv: string | undefined): number | 'none' | 'invalid' {
  if (rv === undefined || rv === '') return 'none';
  return /^\d+$/.test(rv) ? Number(rv) : 'invalid';
}

type Queued =
  | { readonly due: number; readonly kind: 'event'; readonly event: RawWatchEvent }
  | { readonly due: number; readonly kind: 'frame'; readonly frame: WatchFrame }
  | { readonly due: number; readonly kind: 'end' };

/** One open watch response: frames queued with their delivery time, in order. */
class WatchConn implements WatchHandle {
  /** Frames delivered so far (events and bookmarks). */
  delivered = 0;
  stalled = false;
  closed = false;
  private readonly queue: Queued[] = [];
  private lastDue = 0;
  private timer: Subscription | undefined;
  readonly timers = new Subscription();

  private readonly server: SimServer;
  private readonly scheduler: SchedulerLike;
  private readonly subscriber: Subscriber<WatchFrame>;
  readonly request: SimRequest;
  /** The resourceVersion the watch started from: bookmarks come once the type changed after it. */
  readonly startRV: number;
  /** Registered for live events and faults (false for a response that only carries an ERROR). */
  readonly live: boolean;

  constructor(
    server: SimServer,
    scheduler: SchedulerLike,
    subscriber: Subscriber<WatchFrame>,
    request: SimRequest,
    startRV: number,
    live: boolean,
  ) {
    this.server = server;
    this.scheduler = scheduler;
    this.subscriber = subscriber;
    this.request = request;
    this.startRV = startRV;
    this.live = live;
  }

  private enqueue(item: Queued): void {
    if (this.closed || this.stalled) return;
    this.queue.push(item);
    this.lastDue = item.due;
    if (!this.timer) this.timer = this.scheduler.schedule(() => this.flush(), Math.max(0, item.due - this.scheduler.now()));
  }

  private due(delayMs: number): number {
    return Math.max(this.lastDue, this.scheduler.now() + delayMs);
  }

  sendEvent(event: RawWatchEvent, delayMs: number): void {
    this.enqueue({ due: this.due(delayMs), kind: 'event', event });
  }

  sendFrame(frame: WatchFrame, delayMs: number): void {
    this.enqueue({ due: this.due(delayMs), kind: 'frame', frame });
  }

  sendEnd(delayMs: number): void {
    this.enqueue({ due: this.due(delayMs), kind: 'end' });
  }

  private flush(): void {
    this.timer = undefined;
    const now = this.scheduler.now();
    while (!this.closed && !this.stalled) {
      const head = this.queue[0];
      if (!head || head.due > now) break;
      this.queue.shift();
      if (head.kind === 'end') {
        this.finish('complete', `ended cleanly after ${this.delivered} frames`);
        this.subscriber.complete();
        return;
      }
      const frame = head.kind === 'event' ? this.server.streamFaultOn(this, head.event) : head.frame;
      if (frame === 'truncated') {
        this.subscriber.next(this.server.truncatedLine());
        if (this.closed) return;
        this.finish('complete', `ended inside a line after ${this.delivered} frames (truncate)`);
        this.subscriber.complete();
        return;
      }
      this.delivered++;
      this.request.frames++;
      this.subscriber.next(frame);
      if (!this.closed && this.live) this.server.progressed(this);
    }
    const head = this.queue[0];
    if (head && !this.timer && !this.closed && !this.stalled)
      this.timer = this.scheduler.schedule(() => this.flush(), Math.max(0, head.due - now));
  }

  /** Marks the response over on the server's side (the client's subscription ends with it). */
  finish(end: 'complete' | 'error' | 'abort', outcome: string): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.timers.unsubscribe();
    this.server.closed(this, end, outcome);
  }

  drop(message: string): void {
    if (this.closed) return;
    this.server.failed();
    this.finish('error', `dropped after ${this.delivered} frames (${message})`);
    this.subscriber.error(new InformerError('NetworkError', message, { phase: 'watch' }));
  }

  stall(): void {
    if (this.closed) return;
    this.stalled = true;
    this.queue.length = 0;
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.timers.unsubscribe();
    this.request.outcome = `stalled after ${this.delivered} frames`;
  }

  close(): void {
    this.sendEnd(0);
  }

  errorEvent(body: KubeStatusBody): void {
    if (this.closed || this.stalled) return;
    this.server.failed();
    this.sendEvent({ type: 'ERROR', object: body }, this.server.latency(LATENCY.errorMs));
    this.sendEnd(this.server.latency(LATENCY.closeAfterErrorMs));
  }
}

/** The simulated server. `list`/`watch` are the informer's side; the rest is the test's. */
export class SimServer implements ListWatch {
  readonly requests: SimRequest[] = [];
  /** Times of every failure the server caused (error responses, broken watches): a reflector's backoff can count no more. */
  readonly failures: number[] = [];
  /** Timed lines for a failure report. */
  readonly trace: { readonly at: number; readonly text: string }[] = [];
  /** Requests open now, and the most ever open at once. */
  open = 0;
  maxOpen = 0;
  /** Bumped on every write (the harness compares states only after a change). */
  version = 0;

  private rv: number;
  private lastEventRV: number;
  private readonly objects = new Map<string, Stored>();
  private readonly log: LoggedEvent[] = [];
  /** log[windowStart..] is the watch cache's window; a watch from before windowFloor is too old. */
  private windowStart = 0;
  private windowFloor = 0;
  private compactedRev = 0;
  private compactCandidate = 0;
  private readonly watches = new Set<WatchConn>();
  private uids = 0;

  // Faults armed by the test.
  private refusals: { count: number; onRefused: (at: number) => void } | undefined;
  private readonly failing: { code: number; retryAfterSeconds: number | undefined }[] = [];
  private tooLarge: { from: number; onFirst: (at: number) => void; seen: boolean } | undefined;
  private streamFault: { kind: 'malformed' | 'truncate'; onApplied: (at: number) => void } | undefined;
  private whenProgressedHook: ((watch: WatchHandle) => void) | undefined;
  private blackHole: { kind: 'list' | 'watch'; onAccepted: (at: number) => void } | undefined;
  private readonly housekeeping: Subscription;

  private readonly scheduler: SchedulerLike;
  private readonly rng: Rng;

  constructor(scheduler: SchedulerLike, rng: Rng, startRV = 1000) {
    this.scheduler = scheduler;
    this.rng = rng;
    this.rv = startRV;
    this.lastEventRV = startRV;
    this.windowFloor = startRV;
    this.compactedRev = startRV;
    this.compactCandidate = startRV;
    const compact = () => {
      this.compactedRev = this.compactCandidate;
      this.compactCandidate = this.rv;
    };
    this.housekeeping = this.scheduler.schedule(function (this: SchedulerAction<undefined>) {
      compact();
      this.schedule(undefined, SERVER.compactEveryMs);
    }, SERVER.compactEveryMs);
  }

  /** Stops the server's own timers (open responses end with their subscribers). */
  stop(): void {
    this.housekeeping.unsubscribe();
  }

  latency([min, max]: readonly [number, number]): number {
    return this.rng.int(min, max);
  }

  note(text: string): void {
    this.trace.push({ at: this.scheduler.now(), text });
  }

  // ── state ──────────────────────────────────────────────────────────────

  /** key → resourceVersion of every object (what an informer's store must equal). */
  state(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [key, object] of this.objects) out.set(key, String(object.rv));
    return out;
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  has(key: string): boolean {
    return this.objects.has(key);
  }

  get resourceVersion(): number {
    return this.rv;
  }

  private nextRV(): number {
    // Other resources share the counter: a watch sees gaps (03b: 695 → 697).
    this.rv += this.rng.chance(0.3) ? this.rng.int(2, 6) : 1;
    return this.rv;
  }

  /** Creates the object, or updates it when it exists. */
  write(namespace: string, name: string): string {
    const key = keyOf(namespace, name);
    const existing = this.objects.get(key);
    const rv = this.nextRV();
    const object: Stored = existing
      ? { ...existing, rv, rev: existing.rev + 1 }
      : {
          namespace,
          name,
          uid: `uid-${++this.uids}`,
          rv,
          created: new Date(Date.UTC(2026, 0, 1) + this.scheduler.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
          rev: 1,
        };
    this.objects.set(key, object);
    this.append({ rv, type: existing ? 'MODIFIED' : 'ADDED', key, object, at: this.scheduler.now() });
    return `${existing ? 'update' : 'create'} ${key} @${rv}`;
  }

  delete(key: string): string {
    const existing = this.objects.get(key);
    if (!existing) return `delete ${key}: not found`;
    const rv = this.nextRV();
    this.objects.delete(key);
    this.append({ rv, type: 'DELETED', key, object: { ...existing, rv }, at: this.scheduler.now() });
    return `delete ${key} @${rv}`;
  }

  private append(event: LoggedEvent): void {
    this.version++;
    this.log.push(event);
    this.lastEventRV = event.rv;
    this.evict();
    for (const conn of this.watches) conn.sendEvent({ type: event.type, object: wire(event.object, true) }, this.latency(LATENCY.eventMs));
  }

  private evict(): void {
    const now = this.scheduler.now();
    for (;;) {
      const oldest = this.log[this.windowStart];
      if (!oldest || this.log.length - this.windowStart <= SERVER.windowEvents || now - oldest.at < SERVER.windowFreshMs) return;
      this.windowFloor = oldest.rv;
      this.windowStart++;
    }
  }

  /** The objects as of `rv` (etcd's view, for paged and Exact lists). */
  private snapshot(rv: number): Stored[] {
    const at = new Map<string, Stored>();
    for (const event of this.log) {
      if (event.rv > rv) break;
      if (event.type === 'DELETED') at.delete(event.key);
      else at.set(event.key, event.object);
    }
    return [...at.values()];
  }

  // ── faults ─────────────────────────────────────────────────────────────

  /**
   * Calls `apply` with the first open watch that has delivered a frame (a
   * stream in progress): at once if there is one, else right after the next
   * frame delivered.
   */
  whenProgressed(apply: (watch: WatchHandle) => void): void {
    for (const conn of this.watches) {
      if (conn.delivered > 0 && !conn.stalled && !conn.closed) return apply(conn);
    }
    this.whenProgressedHook = apply;
  }

  /** The next event delivered on a watch in progress is replaced by a bad line (malformed) or cut short, ending the stream (truncate). */
  armStreamFault(kind: 'malformed' | 'truncate', onApplied: (at: number) => void): void {
    this.streamFault = { kind, onApplied };
  }

  /** The next `count` requests fail to connect. */
  refuseNext(count: number, onRefused: (at: number) => void): void {
    this.refusals = { count, onRefused };
  }

  /**
   * The next request of `kind` is accepted and never answered: no headers, no frame, no end (a load
   * balancer whose backend vanished). The client's transport gives up after its `requestTimeoutMs`.
   */
  blackHoleNext(kind: 'list' | 'watch', onAccepted: (at: number) => void): void {
    this.blackHole = { kind, onAccepted };
  }

  /** The next requests are answered with these HTTP errors, one each. */
  failNext(code: number, count: number, retryAfterSeconds?: number): void {
    for (let i = 0; i < count; i++) this.failing.push({ code, retryAfterSeconds });
  }

  /** Forgets the HTTP errors not yet sent (the overload is over). */
  clearFailures(): void {
    this.failing.length = 0;
  }

  /**
   * Requests carrying a resourceVersion ≥ `from` get 504 "Too large resource
   * version" (after the cacher's wait) until a list at resourceVersion ""
   * (a quorum read) has been served: as after an etcd restore, or behind a
   * load balancer onto an apiserver that lags.
   */
  tooLargeFrom(from: number, onFirst: (at: number) => void): void {
    this.tooLarge = { from, onFirst, seen: false };
  }

  /** The watch cache forgets everything before now (a watch from before now is too old). */
  expireWindow(): void {
    this.windowFloor = this.lastEventRV;
    this.windowStart = this.log.length;
  }

  // Called by connections.

  progressed(conn: WatchConn): void {
    const hook = this.whenProgressedHook;
    if (!hook || conn.stalled || conn.closed) return;
    this.whenProgressedHook = undefined;
    hook(conn);
  }

  streamFaultOn(conn: WatchConn, event: RawWatchEvent): WatchFrame | 'truncated' {
    const fault = this.streamFault;
    if (!fault || !conn.live || conn.delivered === 0 || event.type === 'BOOKMARK' || event.type === 'ERROR') return event;
    this.streamFault = undefined;
    const rv = (event.object as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    this.note(
      `#${conn.request.seq}: ${fault.kind === 'malformed' ? 'a malformed line in place of' : 'the stream ends inside'} ${event.type} @${rv}`,
    );
    fault.onApplied(this.scheduler.now());
    if (fault.kind === 'truncate') return 'truncated';
    const line = JSON.stringify(event).length;
    // As httpTransport's parseWatchLine reports a line JSON.parse rejects.
    return new InformerError(
      'MalformedLine',
      `watch line is not JSON (${line} chars): Unexpected token '\u0000', "\u0000\u0000\u0000\u0000"... is not valid JSON`,
      { phase: 'watch' },
    );
  }

  truncatedLine(): InformerError {
    // As httpTransport reports a chunked body that ended cleanly inside a line.
    return new InformerError('MalformedLine', `watch stream ended inside a line (${this.rng.int(20, 300)} bytes)`, { phase: 'watch' });
  }

  failed(): void {
    this.failures.push(this.scheduler.now());
  }

  closed(conn: WatchConn, end: 'complete' | 'error' | 'abort', outcome: string): void {
    this.watches.delete(conn);
    if (conn.request.end === undefined) {
      // Keep what was said before (an ERROR, a stall) and add how it ended.
      conn.request.outcome = conn.request.outcome === 'streaming' ? outcome : `${conn.request.outcome}; ${outcome}`;
      this.endRequest(conn.request, end);
    }
  }

  // ── the ListWatch ──────────────────────────────────────────────────────

  private record(kind: 'list' | 'watch', options: ListOptions | WatchOptions): SimRequest {
    const request: SimRequest = {
      seq: this.requests.length + 1,
      kind,
      options,
      at: this.scheduler.now(),
      outcome: 'no answer yet',
      frames: 0,
      endedAt: undefined,
      end: undefined,
    };
    this.requests.push(request);
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    return request;
  }

  private endRequest(request: SimRequest, end: 'complete' | 'error' | 'abort'): void {
    if (request.end !== undefined) return;
    request.end = end;
    request.endedAt = this.scheduler.now();
    this.open--;
    this.note(
      `#${request.seq} ${request.kind} ${describeOptions(request.options)} → ${request.outcome}${end === 'abort' ? ' (aborted by the client)' : ''}`,
    );
  }

  /** Faults that strike before any response: a refused connection, a black hole, an HTTP error. Returns true when it answered. */
  private connectFault<T>(request: SimRequest, subscriber: Subscriber<T>, teardown: Subscription): boolean {
    const hole = this.blackHole;
    if (hole && hole.kind === request.kind) {
      this.blackHole = undefined;
      this.failed();
      request.outcome = 'accepted, never answered (black hole)';
      this.note(`#${request.seq}: ${request.outcome}`);
      hole.onAccepted(this.scheduler.now());
      // As httpTransport: one timer from the request's start to the response headers.
      teardown.add(
        this.scheduler.schedule(() => {
          request.outcome += '; the transport gave up';
          this.endRequest(request, 'error');
          const message = `${request.kind} /api/v1/configmaps: no response headers within ${DEFAULT_REQUEST_TIMEOUT_MS} ms (waiting for: response headers)`;
          subscriber.error(new InformerError('Timeout', message, { phase: request.kind }));
        }, DEFAULT_REQUEST_TIMEOUT_MS - LATENCY.uplinkMs),
      );
      return true;
    }
    const refusals = this.refusals;
    if (refusals && refusals.count > 0) {
      if (--refusals.count === 0) this.refusals = undefined;
      this.failed();
      request.outcome = 'connection refused';
      this.endRequest(request, 'error');
      refusals.onRefused(this.scheduler.now());
      subscriber.error(
        new InformerError('NetworkError', `${request.kind} /api/v1/configmaps: ECONNREFUSED connect ECONNREFUSED 10.96.0.1:443`, {
          phase: request.kind,
        }),
      );
      return true;
    }
    const failing = this.failing.shift();
    if (failing) {
      this.failed();
      this.httpError(
        request,
        subscriber,
        teardown,
        failing.code,
        failureStatus(failing.code, failing.retryAfterSeconds),
        this.latency(LATENCY.errorMs),
        failing.retryAfterSeconds,
      );
      return true;
    }
    return false;
  }

  private httpError<T>(
    request: SimRequest,
    subscriber: Subscriber<T>,
    teardown: Subscription,
    code: number,
    body: KubeStatusBody,
    delayMs: number,
    retryAfterSeconds?: number,
  ): void {
    teardown.add(
      this.scheduler.schedule(() => {
        request.outcome =
          `HTTP ${code} ${body.reason ?? ''}${retryAfterSeconds === undefined ? '' : ` Retry-After: ${retryAfterSeconds}`}`.trim();
        this.endRequest(request, 'error');
        // As httpTransport: Retry-After is read on 429 and 503 only.
        subscriber.error(errorFromStatus(code, body, request.kind, code === 429 || code === 503 ? retryAfterSeconds : undefined));
      }, delayMs),
    );
  }

  list(options: ListOptions): Observable<ListPage> {
    return new Observable<ListPage>((subscriber) => {
      const request = this.record('list', options);
      const teardown = new Subscription();
      teardown.add(this.scheduler.schedule(() => this.answerList(request, options, subscriber, teardown), LATENCY.uplinkMs));
      return () => {
        teardown.unsubscribe();
        this.endRequest(request, 'abort');
      };
    });
  }

  private answerList(request: SimRequest, options: ListOptions, subscriber: Subscriber<ListPage>, teardown: Subscription): void {
    if (this.connectFault(request, subscriber, teardown)) return;
    const limit = options.limit ?? 0;
    const page = (items: Stored[], rv: number, paged: boolean, after = '') => {
      const sorted = items
        .map((o) => ({ key: keyOf(o.namespace, o.name), o }))
        .filter((x) => x.key > after)
        .sort((a, b) => (a.key < b.key ? -1 : 1));
      const taken = paged && limit > 0 ? sorted.slice(0, limit) : sorted;
      const more = taken.length < sorted.length;
      const last = taken[taken.length - 1];
      const result: ListPage = {
        items: taken.map((x) => wire(x.o, false)),
        resourceVersion: String(rv),
        ...(more && last ? { continue: encodeContinue(rv, last.key), remainingItemCount: sorted.length - taken.length } : {}),
      };
      teardown.add(
        this.scheduler.schedule(
          () => {
            request.outcome = `${result.items.length} items at ${rv}${result.continue ? ', continue' : ''}`;
            this.endRequest(request, 'complete');
            subscriber.next(result);
            subscriber.complete();
          },
          this.latency(LATENCY.listMs) + Math.ceil(result.items.length * LATENCY.listPerItemMs),
        ),
      );
    };
    const tooLarge = (requested: number) => {
      this.failed();
      const tl = this.tooLarge;
      this.httpError(request, subscriber, teardown, 504, tooLargeStatus(requested, tl ? tl.from - 1 : this.rv), SERVER.tooLargeWaitMs);
      if (tl && !tl.seen) {
        tl.seen = true;
        teardown.add(this.scheduler.schedule(() => tl.onFirst(this.scheduler.now()), SERVER.tooLargeWaitMs));
      }
    };

    if (options.continue) {
      const token = decodeContinue(options.continue);
      if (!token)
        return this.httpError(
          request,
          subscriber,
          teardown,
          400,
          status(400, 'BadRequest', 'continue key is not valid: illegal base64 data'),
          this.latency(LATENCY.errorMs),
        );
      if (token.rv < this.compactedRev) {
        this.failed();
        return this.httpError(request, subscriber, teardown, 410, status(410, 'Expired', CONTINUE_TOO_OLD), this.latency(LATENCY.errorMs));
      }
      return page(this.snapshot(token.rv), token.rv, true, token.start);
    }
    const rv = parseRV(options.resourceVersion);
    if (rv === 'invalid')
      return this.httpError(
        request,
        subscriber,
        teardown,
        500,
        status(500, undefined, `strconv.ParseUint: parsing "${options.resourceVersion}": invalid syntax`),
        this.latency(LATENCY.errorMs),
      );
    if (rv === 'none') {
      // A quorum read: whatever the cache lags behind, this is the latest state.
      if (this.tooLarge) {
        this.note(`#${request.seq}: a list at resourceVersion "" clears the too-large condition`);
        this.tooLarge = undefined;
      }
      return page([...this.objects.values()], this.rv, limit > 0);
    }
    if (rv === 0) return page([...this.objects.values()], this.rv, false);
    if ((this.tooLarge && rv >= this.tooLarge.from) || rv > this.rv) return tooLarge(rv);
    if (options.resourceVersionMatch === 'Exact' || limit > 0) {
      if (rv < this.compactedRev) {
        this.failed();
        return this.httpError(
          request,
          subscriber,
          teardown,
          410,
          status(410, 'Expired', 'The resourceVersion for the provided list is too old.'),
          this.latency(LATENCY.errorMs),
        );
      }
      return page(this.snapshot(rv), rv, limit > 0);
    }
    return page([...this.objects.values()], this.rv, false);
  }

  watch(options: WatchOptions): Observable<WatchFrame> {
    return new Observable<WatchFrame>((subscriber) => {
      const request = this.record('watch', options);
      const teardown = new Subscription();
      teardown.add(this.scheduler.schedule(() => this.answerWatch(request, options, subscriber, teardown), LATENCY.uplinkMs));
      return () => {
        teardown.unsubscribe();
        this.endRequest(request, 'abort');
      };
    });
  }

  private answerWatch(request: SimRequest, options: WatchOptions, subscriber: Subscriber<WatchFrame>, teardown: Subscription): void {
    if (this.connectFault(request, subscriber, teardown)) return;
    if (options.resourceVersionMatch !== undefined) {
      // 1.20 (05a, 05b): streaming lists are refused.
      return this.httpError(
        request,
        subscriber,
        teardown,
        422,
        status(
          422,
          'Invalid',
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch',
        ),
        this.latency(LATENCY.errorMs),
      );
    }
    const rv = parseRV(options.resourceVersion);
    if (rv === 'invalid')
      return this.httpError(
        request,
        subscriber,
        teardown,
        500,
        status(500, undefined, `strconv.ParseUint: parsing "${options.resourceVersion}": invalid syntax`),
        this.latency(LATENCY.errorMs),
      );
    const open = (startRV: number, live: boolean) => {
      const conn = new WatchConn(this, this.scheduler, subscriber, request, startRV, live);
      teardown.add(() => conn.finish('abort', `aborted by the client after ${conn.delivered} frames`));
      if (live) this.watches.add(conn);
      return conn;
    };

    if (rv !== 'none' && rv !== 0 && ((this.tooLarge && rv >= this.tooLarge.from) || rv > this.rv)) {
      // The cacher waits for the resourceVersion, then sends one ERROR event (HTTP 200).
      const conn = open(rv, false);
      const tl = this.tooLarge;
      request.outcome = 'ERROR 504 Too large resource version';
      conn.timers.add(
        this.scheduler.schedule(() => {
          conn.errorEvent(tooLargeStatus(rv, tl ? tl.from - 1 : this.rv));
          if (tl && !tl.seen) {
            tl.seen = true;
            tl.onFirst(this.scheduler.now());
          }
        }, SERVER.tooLargeWaitMs),
      );
      return;
    }
    this.evict();
    if (typeof rv === 'number' && rv !== 0 && rv < this.windowFloor) {
      const conn = open(rv, false);
      request.outcome = `ERROR 410 too old resource version: ${rv} (${this.windowFloor})`;
      conn.errorEvent(tooOldStatus(rv, this.windowFloor));
      return;
    }

    const startRV = typeof rv === 'number' && rv !== 0 ? rv : this.rv;
    const conn = open(startRV, true);
    request.outcome = 'streaming';
    const firstFrameMs = this.latency(LATENCY.eventMs);
    if (typeof rv === 'number' && rv !== 0) {
      for (let i = this.windowStart; i < this.log.length; i++) {
        const event = this.log[i]!;
        if (event.rv > rv) conn.sendEvent({ type: event.type, object: wire(event.object, true) }, firstFrameMs);
      }
    } else {
      // No resourceVersion, or "0": synthetic ADDED events for the current state first (03e, 03f).
      for (const key of [...this.objects.keys()].sort())
        conn.sendEvent({ type: 'ADDED', object: wire(this.objects.get(key)!, true) }, firstFrameMs);
    }

    const timeoutMs = (options.timeoutSeconds ?? SERVER.defaultWatchTimeoutSeconds) * 1000;
    const started = this.scheduler.now();
    const deadline = started + timeoutMs;
    const finalBookmarkAt = deadline - this.latency(SERVER.finalBookmarkMs);
    const bookmark = () => {
      // Only once the type changed after the watch's start (03c: an idle watch gets none).
      if (options.allowWatchBookmarks && this.lastEventRV > conn.startRV) {
        conn.sendEvent(
          {
            type: 'BOOKMARK',
            object: {
              kind: 'ConfigMap',
              apiVersion: 'v1',
              metadata: { resourceVersion: String(this.lastEventRV), creationTimestamp: null },
            },
          },
          0,
        );
      }
    };
    const scheduleBookmark = (at: number) => {
      if (at >= finalBookmarkAt) {
        if (finalBookmarkAt > this.scheduler.now())
          conn.timers.add(this.scheduler.schedule(bookmark, finalBookmarkAt - this.scheduler.now()));
        return;
      }
      conn.timers.add(
        this.scheduler.schedule(() => {
          bookmark();
          scheduleBookmark(at + SERVER.bookmarkEveryMs);
        }, at - this.scheduler.now()),
      );
    };
    scheduleBookmark(started + SERVER.bookmarkEveryMs + this.latency([-1_000, 1_000]));
    conn.timers.add(this.scheduler.schedule(() => conn.close(), timeoutMs));
  }
}

export function describeOptions(options: ListOptions | WatchOptions): string {
  const parts = Object.entries(options)
    .filter(([, v]) => v !== undefined)
    .map(
      ([k, v]) =>
        `${k === 'resourceVersion' ? 'rv' : k === 'timeoutSeconds' ? 'timeout' : k === 'allowWatchBookmarks' ? 'bookmarks' : k}=${k === 'continue' ? '…' : JSON.stringify(v)}`,
    );
  return parts.join(' ');
}
