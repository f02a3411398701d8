import { MAX_TRACE_LINE_BYTES, MAX_TRACE_REQUESTS, type TraceStopReason } from './format.ts';

/**
 * The rules of a trace writer (`traceWriter`), in the reflector's shape: a state, the inputs, and one
 * pure {@link writerStep} returning the next state and the effects, in order, that the shell in
 * writer.ts carries out (writing, the timer, `stopped$`). Each rule is a row of
 * spec/1-transport/trace/writerStep.spec.ts.
 *
 * - `line` (a whole line of `size` bytes to write, at `at` ms after the start): written while the
 *   writer writes; refused once it has stopped. At or after `durationMs`, the writer stops
 *   (`duration`) instead; and a line that would leave less than {@link STOP_LINE_ROOM} bytes of
 *   `maxBytes` is not written: the writer stops (`maxBytes`), so that the stop line still fits. A
 *   request's line (`request`: a list or a watch) past `maxRequests` (default `MAX_TRACE_REQUESTS`,
 *   the most a reader reads) is not written either: the writer stops (`maxBytes`, the file's limit).
 *   The state says which of the two a `maxBytes` stop on a line was, if either: `refusedLineBytes`
 *   (the line's size; over the longest line, whichever limit was met first) or else `refusedRequests`.
 * - `written`: a write went through; its bytes count (and its request, if it is one).
 * - `failed`: a write threw: the writer stops (`closed`) and writes nothing more, not even the stop
 *   line (a write that throws as the stop line is written only counts as failed).
 * - `due` (the duration's timer): the writer stops (`duration`). `close`: it stops (`closed`).
 * - To stop: the first reason stands, the timer is freed, the stop line is written (unless a write
 *   failed), then `stopped$` hears the reason. Stopping again does nothing.
 */
export interface WriterState {
  /** Bytes written so far, the header included. */
  readonly bytes: number;
  /** Why the writer stopped; undefined while it writes. */
  readonly stopped: TraceStopReason | undefined;
  /** Whether a write threw. */
  readonly failed: boolean;
  /** Requests written (list and watch lines). */
  readonly requests: number;
  /**
   * When the writer stopped (`maxBytes`) on a line longer than a reader reads: its bytes (the caller says so, since
   * the file still reads but lacks that page).
   */
  readonly refusedLineBytes?: number;
  /** When it stopped (`maxBytes`) rather than write one request more than a reader reads: the requests written. */
  readonly refusedRequests?: number;
}

/** The writer's limits: `maxBytes` (Infinity: none) and `durationMs` (undefined: none). */
export interface WriterLimits {
  readonly maxBytes: number;
  readonly durationMs: number | undefined;
  /** The longest line written, its newline included. Default {@link MAX_LINE_SIZE}. */
  readonly maxLineBytes?: number;
  /** The most requests (list and watch lines) written. Default `MAX_TRACE_REQUESTS`: a reader refuses more. */
  readonly maxRequests?: number;
}

/** The longest line a writer writes, its newline included: the longest a reader reads (a longer one makes the file unreadable). */
export const MAX_LINE_SIZE = MAX_TRACE_LINE_BYTES + 1;

export type WriterInput =
  | { readonly type: 'line'; readonly at: number; readonly size: number; readonly request?: boolean }
  | { readonly type: 'written'; readonly size: number; readonly request?: boolean }
  | { readonly type: 'failed' }
  | { readonly type: 'due' | 'close'; readonly at: number };

export type WriterEffect =
  /** Write the line offered. */
  | { readonly type: 'write' }
  /** Free the duration's timer. */
  | { readonly type: 'freeTimer' }
  /** Write the stop line. */
  | { readonly type: 'stopLine'; readonly at: number; readonly why: TraceStopReason }
  /** Tell `stopped$`, and complete it. */
  | { readonly type: 'stopped'; readonly why: TraceStopReason };

/** Room kept for the `stop` line within `maxBytes`, so a stopped trace still ends with one. */
export const STOP_LINE_ROOM = 64;

/** The state once the header, of `headerBytes`, is written. */
export function initialWriter(headerBytes: number): WriterState {
  return { bytes: headerBytes, stopped: undefined, failed: false, requests: 0 };
}

const NONE: readonly never[] = [];
const WRITE: readonly WriterEffect[] = [{ type: 'write' }];

/** One input: the next state and the effects, in order. */
export function writerStep(
  state: WriterState,
  input: WriterInput,
  limits: WriterLimits,
): { readonly state: WriterState; readonly effects: readonly WriterEffect[] } {
  switch (input.type) {
    case 'line': {
      if (state.stopped) return { state, effects: NONE };
      if (limits.durationMs !== undefined && input.at >= limits.durationMs) return stop(state, 'duration', input.at);
      const tooLong = input.size > (limits.maxLineBytes ?? MAX_LINE_SIZE);
      const tooMany = input.request === true && state.requests >= (limits.maxRequests ?? MAX_TRACE_REQUESTS);
      if (state.bytes + input.size + STOP_LINE_ROOM > limits.maxBytes || tooLong || tooMany) {
        const refused = tooLong ? { refusedLineBytes: input.size } : tooMany ? { refusedRequests: state.requests } : {};
        return stop({ ...state, ...refused }, 'maxBytes', input.at);
      }
      return { state, effects: WRITE };
    }
    case 'written': {
      const requests = input.request ? state.requests + 1 : state.requests;
      return { state: { ...state, bytes: state.bytes + input.size, requests }, effects: NONE };
    }
    case 'failed':
      // No stop line follows a failed write: its time does not matter.
      return stop({ ...state, failed: true }, 'closed', 0);
    case 'due':
      return stop(state, 'duration', input.at);
    case 'close':
      return stop(state, 'closed', input.at);
  }
}

function stop(
  state: WriterState,
  why: TraceStopReason,
  at: number,
): { readonly state: WriterState; readonly effects: readonly WriterEffect[] } {
  if (state.stopped) return { state, effects: NONE };
  const effects: WriterEffect[] = [{ type: 'freeTimer' }];
  if (!state.failed) effects.push({ type: 'stopLine', at, why });
  effects.push({ type: 'stopped', why });
  return { state: { ...state, stopped: why }, effects };
}
