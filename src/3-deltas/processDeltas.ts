import { Observable, type ObservableInput, type OperatorFunction } from 'rxjs';
import { drainSerially } from '../util/drainSerially.ts';
import { DeltaQueue } from './deltaQueue.ts';
import { isTombstone, type Deltas, type FifoOutput } from './deltas.ts';
import { forward } from '../util/forward.ts';

/**
 * Hands one key's deltas at a time to an asynchronous handler. While the
 * handler is busy, deltas for a key already waiting coalesce into that key's
 * entry (consecutive Deleted deltas collapse), and keys leave in the order
 * they first arrived: the backlog never holds more entries than distinct keys,
 * however slow the handler. Bookmarks and errors are not handed on.
 *
 * As in client-go's DeltaFIFO, whose queue this is: a resync adds no Sync to a
 * key that still has deltas waiting, and a delete that follows a tombstone
 * (`afterTombstone`) replaces the tombstone while it waits, and is dropped once
 * the tombstone has been handled.
 *
 * ```
 * input:    abcc-----------   a, c: deltas of key a; b: a delta of key b
 * processDeltas(handle)        (handle takes 4 frames, then emits its entry)
 * output:   ----x---y---z--   x: [a]; y: [b]; z: [c, c]
 *           both c arrived while a was being handled: they queue behind b
 *           (keys leave in first-arrival order), as one entry with two deltas
 * ```
 * The output is whatever the handler emits, in order.
 */
export function processDeltas<T, R>(handler: (deltas: Deltas<T>) => ObservableInput<R>): OperatorFunction<FifoOutput<T>, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      const queue = new DeltaQueue<T>();
      const drain = drainSerially(subscriber, () => queue.pop(), handler);

      const subscription = source.subscribe(
        forward(
          subscriber,
          (output) => {
            if (output.type !== 'deltas') return;
            for (const entry of output.items) {
              if (entry.afterTombstone) {
                const waiting = queue.peek(entry.key);
                const last = waiting?.[waiting.length - 1];
                if (last === undefined || last.type !== 'Deleted' || !isTombstone(last.object)) continue;
              } else if (output.cause === 'resync' && queue.has(entry.key) && entry.deltas.every((delta) => delta.type === 'Sync'))
                continue;
              queue.addAll(entry);
            }
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
