/**
 * The rules of a trace file sink (`traceFileSink`), in the reflector's shape: a state, the inputs, and one pure
 * {@link sinkStep} returning the next state and the effects, in order, that the shell in traceFileSink.ts carries out
 * (encoding into its buffer, `writeSync`, the socket, `setImmediate`, closing). Each rule is a row of
 * spec/1-transport/trace/sinkStep.spec.ts.
 *
 * - The kind ({@link sinkKind}): a regular file, a pipe (a FIFO or a socket: written by the event loop, never
 *   blocking) or another device (`/dev/null`: written as a file is, its mode left alone, never cut back).
 * - `line` (a line of `units` UTF-16 units, the buffer holding `used` bytes): refused once a write failed (that
 *   failure is thrown) or once closed; the first line of a turn asks for the turn's end (`setImmediate`). A line that
 *   surely fits (3 bytes a unit) is encoded into the buffer; else the buffer is written first, then the line goes into
 *   the buffer if it can ever fit, or is written on its own.
 * - `flush`: the buffer is written, or the failure held thrown.
 * - `turnEnd`: the buffer is written, or the failure held thrown; `untold`: what that threw, with no call to take it,
 *   is told (`onError`), once: a quiet trace would otherwise sit on a failed file for good.
 * - `failed` (a write threw): the failure is held; a regular file is cut back to its last whole line (a device or a
 *   pipe keeps what it took); it is thrown.
 * - `queue` (a pipe's write, `waiting` bytes with the queue): past {@link PIPE_QUEUE_BYTES} it fails (thrown, held).
 * - `pipeError` (the reader gone): the first failure stands; told once.
 * - `close`: once; the turn's end is cancelled, the buffer written (or the failure thrown) and, whatever that threw,
 *   the file released: a pipe ended (its descriptor closed once its reader took the queue: `drained`), a file closed.
 */

/** What the file is: written to in place (`file`, `device`) or through the event loop (`pipe`). */
export type SinkKind = 'file' | 'device' | 'pipe';

/** The stat bits the kind is told by. */
export interface SinkStat {
  isFile(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
}

/** A regular file, a pipe (a FIFO or a socket) or any other device. */
export const sinkKind = (stat: SinkStat): SinkKind => (stat.isFile() ? 'file' : stat.isFIFO() || stat.isSocket() ? 'pipe' : 'device');

/**
 * The buffer lines are encoded into: fuller than this less a line, it is written out. It bounds what is held: a slow
 * disk blocks the taker in `writeSync` (the informer waits), it never queues (a pipe's reader does: PIPE_QUEUE_BYTES).
 */
export const BUFFER_BYTES = 256 * 1024;

/**
 * The most bytes held for a pipe's reader (a FIFO, `-o /dev/stdout` into a pipe) that has not taken them: a pipe is
 * written without blocking (a reader that stops reading would hold the thread in `write`, deaf to signals), and a line
 * that would pass this fails as a full disk does. 16 MiB: minutes of a busy watch for a reader that is merely slow.
 */
export const PIPE_QUEUE_BYTES = 16 * 1024 * 1024;

export interface SinkState {
  readonly kind: SinkKind;
  /** False once `close` was called. */
  readonly open: boolean;
  /** Whether a failure is held (the shell holds the error itself). */
  readonly failed: boolean;
  /** Whether the failure held was told (`onError`). */
  readonly told: boolean;
  /** Whether the turn's end is awaited (`setImmediate`). */
  readonly scheduled: boolean;
}

export const initialSink = (kind: SinkKind): SinkState => ({ kind, open: true, failed: false, told: false, scheduled: false });

export type SinkInput =
  | { readonly type: 'line'; readonly units: number; readonly used: number }
  | { readonly type: 'flush' | 'turnEnd' | 'untold' | 'failed' | 'close' | 'pipeError' }
  | { readonly type: 'queue'; readonly waiting: number };

export type SinkEffect =
  /** Throw the failure held. */
  | { readonly type: 'throw' }
  /** Throw that the file is closed. */
  | { readonly type: 'throwClosed' }
  /** Throw (and hold) that the pipe's reader stopped reading, `waiting` bytes. */
  | { readonly type: 'throwQueueFull'; readonly waiting: number }
  /** Call `setImmediate` for the turn's end. */
  | { readonly type: 'schedule' }
  /** Cancel the turn's end. */
  | { readonly type: 'cancel' }
  /** Encode the line into the buffer. */
  | { readonly type: 'buffer' }
  /** Write the line on its own (it may never fit the buffer). */
  | { readonly type: 'direct' }
  /** Write the buffer (if it holds anything) and empty it. */
  | { readonly type: 'writeBuffer' }
  /** Hold the error (the first one, for a pipe's error). */
  | { readonly type: 'hold' }
  /** Cut a regular file back to its last whole line. */
  | { readonly type: 'cutBack' }
  /** Tell `onError` of the failure held. */
  | { readonly type: 'tell' }
  /** End the pipe (its descriptor is closed once drained), or close the file and resolve `drained`: done whatever the effects before it threw. */
  | { readonly type: 'release' };

export interface SinkStep {
  readonly state: SinkState;
  readonly effects: readonly SinkEffect[];
}

const THROW: readonly SinkEffect[] = [{ type: 'throw' }];
const THROW_CLOSED: readonly SinkEffect[] = [{ type: 'throwClosed' }];
const BUFFER: readonly SinkEffect[] = [{ type: 'buffer' }];
const SCHEDULE_BUFFER: readonly SinkEffect[] = [{ type: 'schedule' }, { type: 'buffer' }];
const WRITE_BUFFER: readonly SinkEffect[] = [{ type: 'writeBuffer' }];
const NONE: readonly SinkEffect[] = [];

/** A failure held and not yet told: told now (an end of a turn, a pipe's error: no call is there to throw it). */
const tell = (state: SinkState): SinkStep =>
  state.told || !state.failed ? { state, effects: NONE } : { state: { ...state, told: true }, effects: [{ type: 'tell' }] };

/**
 * Whether a `line` of `units` UTF-16 units, the buffer holding `used` bytes, is only buffered, the state unchanged (a
 * turn under way, the line surely fits): {@link sinkStep}'s answer to it is then `[buffer]`. The shell asks this first,
 * on every line, so that the common line costs no object (a record writes a line an event); else it asks the step.
 */
export const onlyBuffered = (state: SinkState, units: number, used: number): boolean =>
  state.scheduled && state.open && !state.failed && used + 3 * units <= BUFFER_BYTES;

/** One rule: the state after `input` and the effects to carry out, in order. */
export function sinkStep(state: SinkState, input: SinkInput): SinkStep {
  switch (input.type) {
    case 'line': {
      if (onlyBuffered(state, input.units, input.used)) return { state, effects: BUFFER };
      if (state.failed) return { state, effects: THROW };
      if (!state.open) return { state, effects: THROW_CLOSED };
      const next = state.scheduled ? state : { ...state, scheduled: true };
      const size = 3 * input.units;
      if (input.used + size <= BUFFER_BYTES) return { state: next, effects: SCHEDULE_BUFFER };
      const effects: SinkEffect[] = state.scheduled ? [] : [{ type: 'schedule' }];
      effects.push({ type: 'writeBuffer' }, { type: size <= BUFFER_BYTES ? 'buffer' : 'direct' });
      return { state: next, effects };
    }
    case 'flush':
      return { state, effects: state.failed ? THROW : WRITE_BUFFER };
    case 'turnEnd':
      return { state: { ...state, scheduled: false }, effects: state.failed ? THROW : WRITE_BUFFER };
    case 'untold':
      return tell(state);
    case 'failed': {
      const cut: readonly SinkEffect[] = state.kind === 'file' ? [{ type: 'cutBack' }] : [];
      return { state: { ...state, failed: true }, effects: [{ type: 'hold' }, ...cut, { type: 'throw' }] };
    }
    case 'queue':
      if (input.waiting <= PIPE_QUEUE_BYTES) return { state, effects: NONE };
      return { state: { ...state, failed: true }, effects: [{ type: 'throwQueueFull', waiting: input.waiting }] };
    case 'pipeError': {
      const held = { ...state, failed: true };
      const told = tell(held);
      return { state: told.state, effects: state.failed ? told.effects : [{ type: 'hold' }, ...told.effects] };
    }
    case 'close': {
      if (!state.open) return { state, effects: NONE };
      const effects: SinkEffect[] = state.scheduled ? [{ type: 'cancel' }] : [];
      effects.push(state.failed ? { type: 'throw' } : { type: 'writeBuffer' }, { type: 'release' });
      return { state: { ...state, open: false, scheduled: false }, effects };
    }
  }
}
