import type { WorkerFailed } from './errors.ts';

/** What `process` reports, per item. Exactly one `done` or `error` ends each run of an item. */
export type WorkEvent<K, R> =
  | { readonly type: 'value'; readonly item: K; readonly value: R }
  | { readonly type: 'done'; readonly item: K }
  | { readonly type: 'error'; readonly item: K; readonly error: WorkerFailed };

/**
 * The rules of `processItems`, in the reflector's shape: two small pure machines whose effects, as
 * data, the shell in processItems.ts carries out in order (subscribing to the queue and the worker,
 * emitting, calling the queue). {@link slotStep} counts the slots; {@link runStep} follows one run of
 * an item, from the worker's start to the slot's release. Each rule is a row of
 * spec/workqueue/processItemsStep.spec.ts.
 *
 * Slots (`concurrency` of them):
 * - `pump`: a free slot takes (waits on `queue.get()`); none free, nothing. The shell pumps in a loop,
 *   never recursively (a synchronous worker would grow the stack), and not once the stream is closed.
 * - `released`: a run let its slot go: the slot is free, and the shell pumps.
 * - `empty`: a slot's `get()` completed without an item (the queue shut down and drained); once every
 *   slot's has, the stream completes.
 *
 * A run (an item the queue handed out, with the priority it was taken at):
 * - `value`: emitted as it comes.
 * - `completed` / `errored`: the outcome is kept (an error as `WorkerFailed` data), not emitted yet.
 * - `settled` (the worker's own teardown, such as its finalize, has run): the outcome is emitted, the
 *   item is done, then the slot is released, so that an item added again cannot start while its
 *   previous run is still cleaning up. Settled without an outcome (the run was cancelled): nothing, the
 *   cancel that follows (the worker is torn down first) re-queues it.
 * - `cancelled` (the stream was unsubscribed while the run held the item): the item is queued again at
 *   the priority it was taken at (the queue ignores it after shutdown), then done (the shell tells the queue
 *   once the run's held promises have settled: holds.ts), so no work is lost.
 *   A run that no longer holds its item: nothing.
 */
export interface SlotState {
  /** Slots neither waiting on the queue nor running a worker. */
  readonly free: number;
  /** Slots whose `get()` ended without an item. */
  readonly ended: number;
}

export type SlotInput = { readonly type: 'pump' | 'released' | 'empty' };

export type SlotEffect =
  /** Wait on `queue.get()` in a slot. */
  | { readonly type: 'take' }
  /** Fill the free slots: step `pump` until no slot takes. */
  | { readonly type: 'pump' }
  /** Complete the stream. */
  | { readonly type: 'complete' };

export function initialSlots(concurrency: number): SlotState {
  return { free: concurrency, ended: 0 };
}

const NONE: readonly never[] = [];
const TAKE: readonly SlotEffect[] = [{ type: 'take' }];
const PUMP: readonly SlotEffect[] = [{ type: 'pump' }];
const COMPLETE: readonly SlotEffect[] = [{ type: 'complete' }];

/** One slot input: the next state and the effects, in order. */
export function slotStep(
  state: SlotState,
  input: SlotInput,
  concurrency: number,
): { readonly state: SlotState; readonly effects: readonly SlotEffect[] } {
  switch (input.type) {
    case 'pump':
      return state.free > 0 ? { state: { ...state, free: state.free - 1 }, effects: TAKE } : { state, effects: NONE };
    case 'released':
      return { state: { ...state, free: state.free + 1 }, effects: PUMP };
    case 'empty': {
      const ended = state.ended + 1;
      return { state: { ...state, ended }, effects: ended === concurrency ? COMPLETE : NONE };
    }
  }
}

/** One run of an item. */
export interface RunState<K> {
  readonly item: K;
  /** The priority the item was taken at (undefined: the queue has none), for a cancelled run to be queued again at. */
  readonly priority: number | undefined;
  /** Whether the run still holds the item: the queue has not been told it is done. */
  readonly held: boolean;
  /** How the worker ended, until the run settles. */
  readonly outcome: Extract<WorkEvent<K, never>, { type: 'done' | 'error' }> | undefined;
}

export type RunInput<R> =
  | { readonly type: 'value'; readonly value: R }
  | { readonly type: 'completed' | 'settled' | 'cancelled' }
  | { readonly type: 'errored'; readonly cause: unknown };

export type RunEffect<K, R> =
  /** Emit a work event. */
  | { readonly type: 'emit'; readonly event: WorkEvent<K, R> }
  /** `queue.add(item, priority)`. */
  | { readonly type: 'add'; readonly item: K; readonly priority: number | undefined }
  /** `queue.done(item)`. */
  | { readonly type: 'done'; readonly item: K }
  /** The run let its slot go: step the slots with `released`. */
  | { readonly type: 'release' };

/** A run of `item`, taken at `priority`, just started. */
export function startRun<K>(item: K, priority: number | undefined): RunState<K> {
  return { item, priority, held: true, outcome: undefined };
}

/** One input of a run: the run's next state and the effects, in order. */
export function runStep<K, R>(
  run: RunState<K>,
  input: RunInput<R>,
): { readonly run: RunState<K>; readonly effects: readonly RunEffect<K, R>[] } {
  const { item } = run;
  switch (input.type) {
    case 'value':
      return { run, effects: [{ type: 'emit', event: { type: 'value', item, value: input.value } }] };
    case 'completed':
      return { run: { ...run, outcome: { type: 'done', item } }, effects: NONE };
    case 'errored':
      return { run: { ...run, outcome: { type: 'error', item, error: { reason: 'WorkerFailed', cause: input.cause } } }, effects: NONE };
    case 'settled': {
      if (run.outcome === undefined) return { run, effects: NONE };
      const effects: RunEffect<K, R>[] = [{ type: 'emit', event: run.outcome }];
      if (run.held) effects.push({ type: 'done', item });
      effects.push({ type: 'release' });
      return { run: { ...run, held: false, outcome: undefined }, effects };
    }
    case 'cancelled':
      if (!run.held) return { run, effects: NONE };
      return {
        run: { ...run, held: false },
        effects: [
          { type: 'add', item, priority: run.priority },
          { type: 'done', item },
        ],
      };
  }
}
