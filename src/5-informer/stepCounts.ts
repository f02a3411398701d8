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

/** A clock: the informer's scheduler. */
export interface Clock {
  now(): number;
}

/**
 * Counts the steps of an informer's runs: {@link StepCounter.start} at each run's start, {@link StepCounter.record} at
 * each step. On every step of every informer, so cheap (left87, docs/performance.md): the clock is read only when a
 * sync's timing ends, and each event is counted in a field of its own, not by a keyed `counts[type]++`.
 */
export class StepCounter {
  private added = 0;
  private updated = 0;
  private deleted = 0;
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

  /** One step of the run; `clock` is read only if this step ends the run's sync. */
  record(state: Pick<InformerState<unknown>, 'step' | 'synced' | 'events' | 'errors'>, clock: Clock): void {
    const events = state.events;
    for (let i = 0; i < events.length; i++) {
      const type = events[i]!.type;
      if (type === 'added') this.added++;
      else if (type === 'updated') this.updated++;
      else this.deleted++;
    }
    const errors = state.errors;
    for (let i = 0; i < errors.length; i++) {
      const reason = errors[i]!.reason;
      this.errors[reason] = (this.errors[reason] ?? 0) + 1;
      if (reason === 'VeryShortWatch') this.shortWatches++;
    }
    if (state.step === 'replace') this.lists++;
    else if (state.step === 'watch') this.watches++;
    this.sawSynced(state.synced, clock);
  }

  /** A state seen, synced or not (a replayed one is not counted, but a synced one ends the sync's timing, at `clock.now()`). */
  sawSynced(synced: boolean, clock: Clock): void {
    // A clock that stepped back gives 0, never a negative duration.
    if (synced && this.syncDurationMs === undefined) this.syncDurationMs = Math.max(0, clock.now() - this.startedAt);
  }

  /** The counts now (copies: they do not move on). */
  snapshot(): StepCounts {
    return {
      eventsTotal: { added: this.added, updated: this.updated, deleted: this.deleted },
      listsTotal: this.lists,
      watchesTotal: this.watches,
      shortWatchesTotal: this.shortWatches,
      errorsTotal: { ...this.errors },
      syncDurationMs: this.syncDurationMs,
    };
  }
}
