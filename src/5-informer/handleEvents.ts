import { Observable, catchError, from, ignoreElements, of, tap, type ObservableInput, type OperatorFunction } from 'rxjs';
import { drainSerially } from '../util/drainSerially.ts';
import { InformerError, describeThrown } from '../0-model/errors.ts';
import { keyOf, type KubeObject } from '../0-model/objects.ts';
import { EventQueue } from './eventQueue.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import { forward } from '../util/forward.ts';
import { isWork } from '../util/isWork.ts';

/**
 * What a handler may return: nothing (done), or something to wait for before the next event: a promise, an
 * Observable, an async iterable (an `async function*` handler) or a generator (a `function*` handler), each run to its
 * end (see {@link isWork}). An array or another iterable returned is a value, done at once.
 */
export type HandlerResult = void | PromiseLike<unknown> | ObservableInput<unknown>;

/** A handler for all events, or one per event type (client-go's ResourceEventHandlerFuncs). */
export type EventHandler<T> =
  | ((event: InformerEvent<T>) => HandlerResult)
  | {
      readonly added?: (event: Extract<InformerEvent<T>, { type: 'added' }>) => HandlerResult;
      readonly updated?: (event: Extract<InformerEvent<T>, { type: 'updated' }>) => HandlerResult;
      readonly deleted?: (event: Extract<InformerEvent<T>, { type: 'deleted' }>) => HandlerResult;
    };

const HANDLER_NAMES = ['added', 'updated', 'deleted'] as const;
/** Where a `TypeError` for client-node's event words points (on(), handleEvents(), ofType()). */
export const MIGRATING = "client-node's on('add', cb) is on({ added: (e) => cb(e.object) }) here (docs/migrating.md)";
/** client-node's event names: a handlers object keyed by them is client-node's shape, not ours. */
const CLIENT_NODE_NAMES = ['add', 'update', 'change', 'delete', 'error', 'connect'];

/**
 * A handler is a function or an object with at least one of `added`, `updated`, `deleted` (functions; own or inherited,
 * as a class's methods), and other members are its own business (a reconciler's `update()` helper, an `error` hook);
 * else a `TypeError` pointing at docs/migrating.md. client-node's `on('add', cb)` and `on({ add, update })` would
 * otherwise start the informer and call nothing, silently. Arguments after a valid handler are ignored, as before
 * (`handlers.forEach(informer.on)` passes an index and the array).
 */
export function checkHandler(caller: string, handler: unknown, extraArguments = 0): void {
  const migrating = MIGRATING;
  const expected = `${caller}: expected one handler, a function or { added, updated, deleted }`;
  if (typeof handler === 'function') return;
  if (typeof handler !== 'object' || handler === null || Array.isArray(handler)) {
    const given =
      typeof handler === 'string'
        ? JSON.stringify(handler)
        : handler === null
          ? 'null'
          : Array.isArray(handler)
            ? 'an array'
            : typeof handler;
    const more = extraArguments > 0 ? ` (and ${extraArguments} more argument${extraArguments > 1 ? 's' : ''})` : '';
    throw new TypeError(`${expected}, got ${given}${more}; ${migrating}`);
  }
  const record = handler as Record<string, unknown>;
  if (!HANDLER_NAMES.some((name) => record[name] !== undefined)) {
    const clientNode = CLIENT_NODE_NAMES.filter((name) => name in record);
    if (clientNode.length > 0) throw new TypeError(`${expected}, got an object with ${clientNode.join(', ')}; ${migrating}`);
    throw new TypeError(`${expected}, got an object with none of them`);
  }
  const notFunction = HANDLER_NAMES.find((name) => record[name] !== undefined && typeof record[name] !== 'function');
  if (notFunction) throw new TypeError(`${expected}: its ${notFunction} is ${typeof record[notFunction]}, not a function`);
}

function call<T>(handler: EventHandler<T>, event: InformerEvent<T>): HandlerResult {
  if (typeof handler === 'function') return handler(event);
  switch (event.type) {
    case 'added':
      return handler.added?.(event);
    case 'updated':
      return handler.updated?.(event);
    case 'deleted':
      return handler.deleted?.(event);
  }
}

function handlerError(event: InformerEvent<KubeObject>, error: unknown): InformerError {
  const key = keyOf(event.object);
  return new InformerError('HandlerError', `the ${event.type} handler threw for ${key}: ${describeThrown(error)}`, {
    phase: 'handler',
    key,
    cause: error,
  });
}

/** What an informer's `on()` handlers have waiting and how long they take (`/metrics`: `informer_handler_*`). */
export interface HandlerMetrics {
  /** Events waiting in the queues of the informer's `on()` handlers, summed (an event being handled is not waiting). */
  readonly depth: number;
  /** From a handler's call until its work is done (it returns, its promise settles, its Observable ends), failures included. */
  readonly durationSeconds: { readonly count: number; readonly sumSeconds: number };
}

/** The counts behind {@link HandlerMetrics}, shared by one informer's handlers: a few numbers, no per-event allocation. */
export class HandlerMetricsRecorder {
  depth = 0;
  private count = 0;
  private sum = 0;
  /** `now` in ms (the informer's scheduler). */
  readonly now: () => number;
  constructor(now: () => number) {
    this.now = now;
  }

  /** A handler's work that began at `startedAt` is done. */
  observe(startedAt: number): void {
    this.count++;
    this.sum += Math.max(0, this.now() - startedAt) / 1000; // ≥ 0 on a clock that steps back (a scheduler given)
  }

  snapshot(): HandlerMetrics {
    return { depth: this.depth, durationSeconds: { count: this.count, sumSeconds: this.sum } };
  }
}

/**
 * Runs a handler for each event, one at a time, isolating it: a handler that
 * throws (or whose promise rejects, or whose Observable errors) is reported as
 * a `HandlerError` on the output and the next event is handled as usual.
 *
 * A handler that is slower than the informer gets DeltaFIFO-style per-key
 * coalescing (see `EventQueue`): its backlog holds at most two events per
 * distinct key, and it always ends at the informer's state.
 *
 * `informer.on(handler)` is `informer.events$.pipe(handleEvents(handler))`, with the same order, coalescing and
 * resyncs (`updated` with `resync: true`, unless a `skipResync()` before it drops them). They differ in where a
 * fault goes: `on()` sends it to the informer's `errors$` (a warning while nothing observes that), and counts the
 * handler in `handlerMetrics()`; here the `HandlerError`s are this operator's output, to subscribe to (a bare
 * `subscribe()` drops them), and nothing is counted. Use this one for a stream you shape first
 * (`events$.pipe(ofType('updated'), skipResync(), handleEvents(h))`), `on()` for the informer's every event.
 *
 * ```
 * events:   -w-x-y-z-----------|      w: added a1, x: updated a1→a2, y: added b1, z: updated a2→a3
 * handleEvents(slow)                  (slow takes 8 frames)
 * handled:  -w-------u-------y-------   u: one update a1→a3 (x and z merged while w ran), then b
 * output:   -------------------------|  only HandlerErrors (none here); completes once the backlog is done
 * ```
 */
export function handleEvents<T extends KubeObject>(handler: EventHandler<T>): OperatorFunction<InformerEvent<T>, InformerError> {
  checkHandler('handleEvents', handler);
  return measuredHandleEvents(handler, undefined);
}

/** {@link handleEvents}, counting into `metrics` (the informer's `on()`). */
export function measuredHandleEvents<T extends KubeObject>(
  handler: EventHandler<T>,
  metrics: HandlerMetricsRecorder | undefined,
): OperatorFunction<InformerEvent<T>, InformerError> {
  return (source) =>
    new Observable<InformerError>((subscriber) => {
      const queue = new EventQueue<T>();
      const next = () => {
        const event = queue.shift();
        if (event && metrics) metrics.depth--;
        return event;
      };
      const drain = drainSerially(subscriber, next, (event) => {
        const startedAt = metrics ? metrics.now() : 0;
        let result: HandlerResult;
        try {
          result = call(handler, event);
        } catch (error) {
          metrics?.observe(startedAt);
          subscriber.next(handlerError(event, error));
          return undefined;
        }
        if (!isWork(result)) {
          metrics?.observe(startedAt);
          return undefined;
        }
        // The work's values are not the output; its error is reported, and the next event handled.
        const work = from(result).pipe(
          ignoreElements(),
          catchError((error: unknown) => of(handlerError(event, error))),
        );
        return metrics ? work.pipe(tap({ complete: () => metrics.observe(startedAt) })) : work;
      });

      // A handler that unsubscribed its own on() gets no further call (the drain checks).
      const subscription = source.subscribe(
        forward(
          subscriber,
          (event) => {
            const before = queue.size;
            queue.push(event);
            if (metrics) metrics.depth += queue.size - before;
            drain.pump();
          },
          () => drain.end(),
        ),
      );
      return () => {
        subscription.unsubscribe();
        drain.unsubscribe();
        // What this handler left waiting no longer waits.
        if (metrics) metrics.depth -= queue.size;
      };
    });
}
