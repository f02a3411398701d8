import { Fifo } from '../util/fifo.ts';
import { count } from './format.ts';

/**
 * The rules of the CLI's webhook and Slack sinks (`HttpSink`, ./sink.ts), in the reflector's shape: a state, the inputs,
 * and one pure {@link httpSinkStep} giving the next state and the effects, in order, that the shell carries out (the
 * POST, the backoff's timer and jitter, the close's deadline, the report lines). No I/O, no clock (`now` is given). The
 * only mutation is the queue of waiting items (a {@link Fifo} the state owns): copying it at each item would make a
 * long queue quadratic. Each rule is a row of spec/cli/httpSinkStep.spec.ts.
 *
 * - `send`: refused once closing; an item past the byte bound on its own is dropped; else queued, and the oldest waiting
 *   items dropped while the bytes waiting and in flight pass the bound. An idle sink posts the next batch, its backoff
 *   afresh.
 * - `posted`: a 2xx delivers the batch (the backoff starts again), a refusal (other 4xx, a redirect) loses it; either way
 *   the next batch goes. A failure (5xx, 408, 429, network) keeps the batch and waits: the receiver's Retry-After, else
 *   the backoff's next step (the shell's, as it draws the jitter), then `waited` posts the same batch again.
 * - Problems (failed attempts, drops): the first is reported at once, later ones summed up at the next `tick` (the
 *   report interval) or at the end.
 * - `close`: no more items; an idle sink is done at once, a busy one drains until idle, or until `cut` (the close's
 *   deadline) aborts what is in flight. Done: the last summary line, then `closed`.
 */
export interface HttpSinkState {
  readonly phase: 'idle' | 'posting' | 'waiting' | 'closed';
  /** Items not yet posted, oldest first (mutated in place: see above). */
  readonly waiting: Fifo<SinkItem>;
  /** The batch being posted, or waiting to be posted again. */
  readonly inFlight: readonly SinkItem[];
  /** Bytes of the items waiting and in flight. */
  readonly bytes: number;
  /** `close` was called: `send` is refused, and the sink ends once idle. */
  readonly closing: boolean;
  readonly delivered: number;
  readonly dropped: number;
  readonly rejected: number;
  /** Since the last report line: failed attempts, drops, and the last problem. */
  readonly pendingFailures: number;
  readonly pendingDrops: number;
  readonly lastProblem: string;
  /** Until when (the `now` of the steps) a problem waits for the interval's summary instead of being reported at once. */
  readonly quietUntil: number;
}

export interface SinkItem {
  readonly text: string;
  /** Its UTF-8 length. */
  readonly bytes: number;
}

/** The fixed settings of a step. */
export interface HttpSinkConfig {
  /** What report lines call the sink (`webhook https://host`). */
  readonly label: string;
  readonly maxBatch: number;
  readonly maxQueueBytes: number;
  readonly reportIntervalMs: number;
}

/** What a POST came to. */
export type SinkOutcome =
  { readonly ok: true } | { readonly ok: false; readonly permanent: boolean; readonly problem: string; readonly retryAfterMs?: number };

export type HttpSinkInput =
  /** An item to deliver, with its UTF-8 length. */
  | { readonly type: 'send'; readonly item: SinkItem }
  /** The POST of the batch in flight ended. */
  | { readonly type: 'posted'; readonly outcome: SinkOutcome }
  /** The wait after a failed attempt is over. */
  | { readonly type: 'waited' }
  /** The report interval's timer. */
  | { readonly type: 'tick' }
  /** `close()`: drain until `deadline` (ms since the epoch, the shell's to arm), then end. */
  | { readonly type: 'close'; readonly deadline: number }
  /** The close's deadline passed: what is in flight is aborted, the rest stays unsent. */
  | { readonly type: 'cut' };

export type HttpSinkEffect =
  /** POST these items as one body. */
  | { readonly type: 'post'; readonly items: readonly string[] }
  /** Wait, then input `waited`: `retryAfterMs` when the receiver asked for it, else the backoff's next step. */
  | { readonly type: 'wait'; readonly retryAfterMs: number | undefined }
  /** A delivery, or posting again after idling: the backoff starts again from its first step. */
  | { readonly type: 'resetBackoff' }
  /** One line for the user. */
  | { readonly type: 'report'; readonly line: string }
  /** A close while busy: input `cut` at `deadline` (ms since the epoch). */
  | { readonly type: 'armCut'; readonly deadline: number }
  /** Abort the request in flight and the wait, if any. */
  | { readonly type: 'abort' }
  /** The sink has ended: stop the timers, answer `close()`. */
  | { readonly type: 'closed' };

export interface HttpSinkStep {
  readonly state: HttpSinkState;
  readonly effects: readonly HttpSinkEffect[];
}

/** What a sink did over its life (see `SinkSummary` in ./sink.ts). */
export interface SinkCounts {
  readonly delivered: number;
  readonly dropped: number;
  readonly rejected: number;
  readonly unsent: number;
}

/** A new sink's state: idle, nothing queued. */
export function initialHttpSink(): HttpSinkState {
  return {
    phase: 'idle',
    waiting: new Fifo(),
    inFlight: [],
    bytes: 0,
    closing: false,
    delivered: 0,
    dropped: 0,
    rejected: 0,
    pendingFailures: 0,
    pendingDrops: 0,
    lastProblem: '',
    quietUntil: 0,
  };
}

/** Items waiting or in flight. */
export const queuedItems = (state: HttpSinkState): number => state.waiting.length + state.inFlight.length;

/** The summary so far; what is queued or in flight counts as unsent. */
export function sinkCounts(state: HttpSinkState): SinkCounts {
  return { delivered: state.delivered, dropped: state.dropped, rejected: state.rejected, unsent: queuedItems(state) };
}

/** One input: the next state, and what the shell must do, in order. */
export function httpSinkStep(config: HttpSinkConfig, state: HttpSinkState, input: HttpSinkInput, now: number): HttpSinkStep {
  const out: HttpSinkEffect[] = [];
  return { state: stepInto(config, state, input, now, out), effects: out };
}

function stepInto(config: HttpSinkConfig, state: HttpSinkState, input: HttpSinkInput, now: number, out: HttpSinkEffect[]): HttpSinkState {
  switch (input.type) {
    case 'send':
      return state.closing ? state : onSend(config, state, input.item, now, out);
    case 'posted':
      return state.phase === 'posting' ? onPosted(config, state, input.outcome, now, out) : state;
    case 'waited':
      return state.phase === 'waiting' ? post(config, state, now, out) : state;
    case 'tick':
      return state.phase === 'closed' ? state : flushReport(config, state, now, out);
    case 'close':
      if (state.phase === 'closed') return (out.push({ type: 'closed' }), state);
      if (state.phase === 'idle') return finish(config, { ...state, closing: true }, now, out);
      out.push({ type: 'armCut', deadline: input.deadline });
      return { ...state, closing: true };
    case 'cut':
      return state.phase === 'closed' ? state : finish(config, state, now, out);
  }
}

/** Queued; the oldest waiting items go while the bound is passed (in-flight ones stay: they are being posted). */
function onSend(config: HttpSinkConfig, state: HttpSinkState, item: SinkItem, now: number, out: HttpSinkEffect[]): HttpSinkState {
  if (item.bytes > config.maxQueueBytes) return dropped(config, state, now, out);
  state.waiting.push(item);
  let next: HttpSinkState = { ...state, bytes: state.bytes + item.bytes };
  // Each drop is told as it happens (the first at once, with what then waits; the rest in the interval's summary).
  while (next.bytes > config.maxQueueBytes && next.waiting.length > 0)
    next = dropped(config, { ...next, bytes: next.bytes - next.waiting.shift().bytes }, now, out);
  if (next.phase !== 'idle') return next;
  // A new run after idling starts its backoff afresh (failures before a refusal and the idle are forgotten).
  out.push({ type: 'resetBackoff' });
  return post(config, next, now, out);
}

function onPosted(config: HttpSinkConfig, state: HttpSinkState, outcome: SinkOutcome, now: number, out: HttpSinkEffect[]): HttpSinkState {
  if (!outcome.ok && !outcome.permanent) {
    const next = failed(config, state, outcome.problem, now, out);
    out.push({ type: 'wait', retryAfterMs: outcome.retryAfterMs });
    return { ...next, phase: 'waiting' };
  }
  const batch = state.inFlight.length;
  let next: HttpSinkState = { ...state, inFlight: [], bytes: state.bytes - state.inFlight.reduce((n, item) => n + item.bytes, 0) };
  if (outcome.ok) {
    next = { ...next, delivered: next.delivered + batch };
    out.push({ type: 'resetBackoff' });
  } else {
    next = failed(config, { ...next, rejected: next.rejected + batch }, `${outcome.problem}; ${count(batch, 'event')} given up`, now, out);
  }
  return post(config, next, now, out);
}

/** The batch in flight again, or the next one (up to `maxBatch` items); with none, idle (done, when closing). */
function post(config: HttpSinkConfig, state: HttpSinkState, now: number, out: HttpSinkEffect[]): HttpSinkState {
  const inFlight = state.inFlight.length > 0 ? state.inFlight : takeBatch(state.waiting, config.maxBatch);
  if (inFlight.length === 0) return state.closing ? finish(config, state, now, out) : { ...state, phase: 'idle' };
  out.push({ type: 'post', items: inFlight.map((item) => item.text) });
  return { ...state, phase: 'posting', inFlight };
}

function takeBatch(waiting: Fifo<SinkItem>, max: number): SinkItem[] {
  const batch: SinkItem[] = [];
  while (batch.length < max && waiting.length > 0) batch.push(waiting.shift());
  return batch;
}

/** Stops taking items and ends: abort what runs, the last summary line, then `closed`. */
function finish(config: HttpSinkConfig, state: HttpSinkState, now: number, out: HttpSinkEffect[]): HttpSinkState {
  out.push({ type: 'abort' });
  const next = flushReport(config, { ...state, closing: true }, now, out);
  out.push({ type: 'closed' });
  return { ...next, phase: 'closed' };
}

function dropped(config: HttpSinkConfig, state: HttpSinkState, now: number, out: HttpSinkEffect[]): HttpSinkState {
  return maybeReport(config, { ...state, dropped: state.dropped + 1, pendingDrops: state.pendingDrops + 1 }, now, out);
}

function failed(config: HttpSinkConfig, state: HttpSinkState, problem: string, now: number, out: HttpSinkEffect[]): HttpSinkState {
  return maybeReport(config, { ...state, pendingFailures: state.pendingFailures + 1, lastProblem: problem }, now, out);
}

/** The first problem is told at once; later ones wait for the interval's summary. */
function maybeReport(config: HttpSinkConfig, state: HttpSinkState, now: number, out: HttpSinkEffect[]): HttpSinkState {
  return now < state.quietUntil ? state : flushReport(config, state, now, out);
}

function flushReport(config: HttpSinkConfig, state: HttpSinkState, now: number, out: HttpSinkEffect[]): HttpSinkState {
  if (state.pendingFailures === 0 && state.pendingDrops === 0) return state;
  const parts = [
    state.pendingFailures ? `${count(state.pendingFailures, 'failed attempt')} (last: ${state.lastProblem})` : '',
    state.pendingDrops ? `${count(state.pendingDrops, 'event')} dropped as the queue was full` : '',
  ].filter(Boolean);
  out.push({ type: 'report', line: `${config.label}: ${parts.join('; ')}; ${queuedItems(state)} waiting` });
  return { ...state, pendingFailures: 0, pendingDrops: 0, quietUntil: now + config.reportIntervalMs };
}
