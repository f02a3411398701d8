import type { ErrorReason } from '../0-model/errors.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';

/**
 * What an informer's steps have done since it was made, every run (each start after a full stop) added, so the counts
 * only grow: the counters of `informerMetrics$` (`serve()`'s `/metrics`). Kept by the informer itself, as its
 * `handlerMetrics` are, so a subscriber that joins late (a `serve()` started after the informers synced) reads the
 * whole count, not the steps after it joined.
 */
export interface StepCounts {
  readonly eventsTotal: Readonly<Record<'added' | 'updated' | 'deleted', number>>;
  /** Lists (initial and relists) delivered. */
  readonly listsTotal: number;
  /** Watch requests opened. */
  readonly watchesTotal: number;
  /** Very short watches (ended at once with no event). */
  readonly shortWatchesTotal: number;
  readonly errorsTotal: Readonly<Partial<Record<ErrorReason, number>>>;
  /** From the start of the current run to its first synced step, in ms of the counter's clock; undefined until synced. */
  readonly syncDurationMs: number | undefined;
}

/** Counts the steps of an informer's runs: {@link StepCounter.start} at each run's start, {@link StepCounter.record} at each step. */
export class StepCounter {
  private readonly events = { added: 0, updated: 0, deleted: 0 };
  private readonly errors: Partial<Record<ErrorReason, number>> = {};
  private lists = 0;
  private watches = 0;
  private shortWatches = 0;
  private startedAt = 0;
  private syncDurationMs: number | undefined;

  /** A run starts (the informer's first subscriber, or the first after a full stop): its sync is timed from `now`. */
  start(now: number): void {
    this.startedAt = now;
    this.syncDurationMs = undefined;
  }

  /** One step of the run, at `now`. */
  record(state: Pick<InformerState<unknown>, 'step' | 'synced' | 'events' | 'errors'>, now: number): void {
    const events = state.events;
    for (let i = 0; i < events.length; i++) this.events[events[i]!.type]++;
    const errors = state.errors;
    for (let i = 0; i < errors.length; i++) {
      const reason = errors[i]!.reason;
      this.errors[reason] = (this.errors[reason] ?? 0) + 1;
      if (reason === 'VeryShortWatch') this.shortWatches++;
    }
    if (state.step === 'replace') this.lists++;
    else if (state.step === 'watch') this.watches++;
    this.sawSynced(state.synced, now);
  }

  /** A state seen at `now`, synced or not (a replayed one is not counted, but a synced one ends the sync's timing). */
  sawSynced(synced: boolean, now: number): void {
    // A clock that stepped back gives 0, never a negative duration.
    if (synced && this.syncDurationMs === undefined) this.syncDurationMs = Math.max(0, now - this.startedAt);
  }

  /** The counts now (copies: they do not move on). */
  snapshot(): StepCounts {
    return {
      eventsTotal: { ...this.events },
      listsTotal: this.lists,
      watchesTotal: this.watches,
      shortWatchesTotal: this.shortWatches,
      errorsTotal: { ...this.errors },
      syncDurationMs: this.syncDurationMs,
    };
  }
}
