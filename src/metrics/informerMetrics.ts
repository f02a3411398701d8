import { Observable, type SchedulerLike } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import type { ErrorReason } from '../0-model/errors.ts';
import { resourceName } from '../0-model/resources.ts';
import { keyOf, type KubeObject } from '../0-model/objects.ts';
import type { Informer } from '../5-informer/informer.ts';
import { approximateBytes } from './approximateBytes.ts';

/** What an informer has done, counted from its first subscription. */
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
  /** From subscription to synced, in seconds; undefined until synced. */
  readonly syncDurationSeconds: number | undefined;
}

/**
 * The informer's metrics, updated after every step of its pipeline (a
 * snapshot per emission). Subscribing shares the informer's connection; it
 * does not open another. `storeBytes` is kept up to date per event (each
 * object version is measured once, so the cost follows the objects that
 * change); a subscriber that joins a running informer measures its cache once.
 */
export function informerMetrics$(
  informer: Pick<Informer<KubeObject>, 'state$' | 'resource'>,
  scheduler: SchedulerLike = monotonicScheduler,
): Observable<InformerMetrics> {
  return new Observable<InformerMetrics>((subscriber) => {
    const started = scheduler.now();
    const events = { added: 0, updated: 0, deleted: 0 };
    const errors: Partial<Record<ErrorReason, number>> = {};
    let lists = 0;
    let watches = 0;
    let shortWatches = 0;
    let syncDurationSeconds: number | undefined;
    let first = true;
    let bytes = 0;
    let previous: { get(key: string): KubeObject | undefined } | undefined;
    const sizes = new WeakMap<object, number>();
    const sizeOf = (object: KubeObject) => {
      let size = sizes.get(object);
      if (size === undefined) sizes.set(object, (size = approximateBytes(object)));
      return size;
    };
    return informer.state$.subscribe((state) => {
      // The replayed state describes the past: count from here on.
      if (first) {
        for (const [, object] of state.store.entries()) bytes += sizeOf(object);
      } else {
        for (const event of state.events) {
          events[event.type]++;
          if (event.type === 'added') bytes += sizeOf(event.object);
          // The cached version is the one counted (the DELETED event brings the final state).
          else if (event.type === 'deleted') bytes -= sizeOf(previous?.get(keyOf(event.object)) ?? event.object);
          else if (event.object !== event.oldObject) bytes += sizeOf(event.object) - sizeOf(event.oldObject);
        }
        for (const error of state.errors) {
          errors[error.reason] = (errors[error.reason] ?? 0) + 1;
          if (error.reason === 'VeryShortWatch') shortWatches++;
        }
        if (state.step === 'replace') lists++;
        if (state.step === 'watch') watches++;
      }
      first = false;
      previous = state.store;
      if (state.synced && syncDurationSeconds === undefined) syncDurationSeconds = Math.max(0, scheduler.now() - started) / 1000;
      subscriber.next({
        name: resourceName(informer.resource),
        eventsTotal: { ...events },
        listsTotal: lists,
        watchesTotal: watches,
        shortWatchesTotal: shortWatches,
        errorsTotal: { ...errors },
        storeObjects: state.store.size,
        storeBytes: state.store.size === 0 ? 0 : bytes,
        lastResourceVersion: state.resourceVersion,
        syncDurationSeconds,
      });
    });
  });
}
