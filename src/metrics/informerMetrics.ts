import { Observable, type SchedulerLike } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import type { ErrorReason } from '../0-model/errors.ts';
import { resourceName } from '../0-model/resources.ts';
import { keyOf, type KubeObject } from '../0-model/objects.ts';
import type { Informer } from '../5-informer/informer.ts';
import { approximateBytes } from './approximateBytes.ts';
import { stepCountsOf } from '../5-informer/informerFromSource.ts';
import { StepCounter } from '../5-informer/stepCounts.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';
import { forward } from '../util/forward.ts';

/** What an informer has done since it was made (its counters only grow), and holds now. */
export interface InformerMetrics {
  /** The resource, e.g. `pods` or `deployments.apps` (the `name` label). */
  readonly name: string;
  readonly eventsTotal: Readonly<Record<'added' | 'updated' | 'deleted', number>>;
  /** Lists (initial and relists) delivered. */
  readonly listsTotal: number;
  /** Watch requests opened. */
  readonly watchesTotal: number;
  /** Very short watches (ended at once with no event). */
  readonly shortWatchesTotal: number;
  readonly errorsTotal: Readonly<Partial<Record<ErrorReason, number>>>;
  /** Objects cached now. */
  readonly storeObjects: number;
  /** About how many bytes of JSON the cached objects make (see `approximateBytes`). */
  readonly storeBytes: number;
  /** The last resourceVersion seen ('' before the first list). */
  readonly lastResourceVersion: string;
  /** From the start of the informer's current run (its first subscriber) to synced, in seconds; undefined until synced. */
  readonly syncDurationSeconds: number | undefined;
}

/**
 * The informer's metrics, updated after every step of its pipeline (a
 * snapshot per emission). Subscribing shares the informer's connection; it
 * does not open another. The counters and the sync time are the informer's own, counted from its start
 * (`stepCountsOf`), so a subscriber that joins a running informer (a `serve()` started after it synced) reads every
 * list and event so far; an object that is no informer of ours is counted from this subscription on, on `scheduler`.
 * `storeBytes` is kept up to date per event (each
 * object version is measured once, so the cost follows the objects that
 * change); a subscriber that joins a running informer measures its cache once.
 */
export function informerMetrics$(
  informer: Pick<Informer<KubeObject>, 'state$' | 'resource'>,
  scheduler: SchedulerLike = monotonicScheduler,
): Observable<InformerMetrics> {
  return new Observable<InformerMetrics>((subscriber) => {
    // Ours, if the informer keeps none (a plain object cast to one): from this subscription on.
    const own = stepCountsOf(informer.state$) === undefined ? new StepCounter() : undefined;
    own?.start(scheduler.now());
    let first = true;
    let bytes = 0;
    let previous: { get(key: string): KubeObject | undefined } | undefined;
    const sizes = new WeakMap<object, number>();
    const sizeOf = (object: KubeObject) => {
      let size = sizes.get(object);
      if (size === undefined) sizes.set(object, (size = approximateBytes(object)));
      return size;
    };
    // Its error and end are this Observable's (serve() reports an informer stopped by them; a bare callback rethrew).
    return informer.state$.subscribe(
      forward(subscriber, (state: InformerState<KubeObject>) => {
        // The first state is a replay (docs/api.md, `state$`): its store is measured whole, its step is not counted again.
        if (first) {
          for (const [, object] of state.store.entries()) bytes += sizeOf(object);
          own?.sawSynced(state.synced, scheduler);
        } else {
          for (const event of state.events) {
            if (event.type === 'added') bytes += sizeOf(event.object);
            // The cached version is the one counted (the DELETED event brings the final state).
            else if (event.type === 'deleted') bytes -= sizeOf(previous?.get(keyOf(event.object)) ?? event.object);
            else if (event.object !== event.oldObject) bytes += sizeOf(event.object) - sizeOf(event.oldObject);
          }
          own?.record(state, scheduler);
        }
        first = false;
        previous = state.store;
        const counts = own?.snapshot() ?? stepCountsOf(informer.state$)!;
        subscriber.next({
          name: resourceName(informer.resource),
          eventsTotal: counts.eventsTotal,
          listsTotal: counts.listsTotal,
          watchesTotal: counts.watchesTotal,
          shortWatchesTotal: counts.shortWatchesTotal,
          errorsTotal: counts.errorsTotal,
          storeObjects: state.store.size,
          storeBytes: state.store.size === 0 ? 0 : bytes,
          lastResourceVersion: state.resourceVersion,
          syncDurationSeconds: counts.syncDurationMs === undefined ? undefined : counts.syncDurationMs / 1000,
        });
      }),
    );
  });
}
