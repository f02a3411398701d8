import { Observable, catchError, from, ignoreElements, isObservable, of, type ObservableInput, type OperatorFunction } from 'rxjs';
import { drainSerially } from '../util/drainSerially.ts';
import { InformerError, describeThrown } from '../0-model/errors.ts';
import { keyOf, type KubeObject } from '../0-model/objects.ts';
import { EventQueue } from './eventQueue.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import { forward } from '../util/forward.ts';

/** What a handler may return: nothing (done), or something to wait for. */
export type HandlerResult = void | PromiseLike<unknown> | ObservableInput<unknown>;

/** A handler for all events, or one per event type (client-go's ResourceEventHandlerFuncs). */
export type EventHandler<T> =
  | ((event: InformerEvent<T>) => HandlerResult)
  | {
      readonly added?: (event: Extract<InformerEvent<T>, { type: 'added' }>) => HandlerResult;
      readonly updated?: (event: Extract<InformerEvent<T>, { type: 'updated' }>) => HandlerResult;
      readonly deleted?: (event: Extract<InformerEvent<T>, { type: 'deleted' }>) => HandlerResult;
    };

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

function isPending(result: HandlerResult): result is PromiseLike<unknown> | ObservableInput<unknown> {
  return result !== undefined && result !== null && (isObservable(result) || typeof (result as PromiseLike<unknown>).then === 'function');
}

function handlerError(event: InformerEvent<KubeObject>, error: unknown): InformerError {
  const key = keyOf(event.object);
  return new InformerError('HandlerError', `the ${event.type} handler threw for ${key}: ${describeThrown(error)}`, {
    phase: 'handler',
    key,
    cause: error,
  });
}

/**
 * Runs a handler for each event, one at a time, isolating it: a handler that
 * throws (or whose promise rejects, or whose Observable errors) is reported as
 * a `HandlerError` on the output and the next event is handled as usual.
 *
 * A handler that is slower than the informer gets DeltaFIFO-style per-key
 * coalescing (see `EventQueue`): its backlog is bounded by the number of
 * distinct keys, and it always ends at the informer's state.
 *
 * ```
 * events:   -w-x-y-z-----------|      w: added a1, x: updated a1→a2, y: added b1, z: updated a2→a3
 * handleEvents(slow)                  (slow takes 8 frames)
 * handled:  -w-------u-------y-------   u: one update a1→a3 (x and z merged while w ran), then b
 * output:   -------------------------|  only HandlerErrors (none here); completes once the backlog is done
 * ```
 */
export function handleEvents<T extends KubeObject>(handler: EventHandler<T>): OperatorFunction<InformerEvent<T>, InformerError> {
  return (source) =>
    new Observable<InformerError>((subscriber) => {
      const queue = new EventQueue<T>();
      const drain = drainSerially(
        subscriber,
        () => queue.shift(),
        (event) => {
          let result: HandlerResult;
          try {
            result = call(handler, event);
          } catch (error) {
            subscriber.next(handlerError(event, error));
            return undefined;
          }
          if (!isPending(result)) return undefined;
          // The work's values are not the output; its error is reported, and the next event handled.
          return from(result).pipe(
            ignoreElements(),
            catchError((error: unknown) => of(handlerError(event, error))),
          );
        },
      );

      // A handler that unsubscribed its own on() gets no further call (the drain checks).
      const subscription = source.subscribe(
        forward(
          subscriber,
          (event) => {
            queue.push(event);
            drain.pump();
          },
          () => drain.end(),
        ),
      );
      return () => {
        subscription.unsubscribe();
        drain.unsubscribe();
      };
    });
}
