import { onListFailed, onListed } from './listing.ts';
import type { WatchFrame } from '../1-transport/listWatch.ts';
import type { ReflectorConfig, ReflectorInput, ReflectorState, StepResult } from './reflectorState.ts';
import { afterWait, relist, startBackoff, toInformerError, type Effects } from './transitions.ts';
import { finishWatch, onCheck, onFrame, onTimeoutPicked, onWatchEnded } from './watching.ts';

/**
 * The reflector's one transition function: a state and an input (a page, a watch frame,
 * a timer …) give the next state and the effects the shell must carry out, in order
 * (emit a source event, send a request, arm a timer). Pure: no I/O, no clock (`now` is
 * given), no randomness (the shell draws watch timeouts and the backoff's jitter, and inputs them). The only
 * mutation is a streaming list's own Map of initial objects (see `Streaming`).
 *
 * An input from a request or timer that is no longer current (its `id` is not
 * `state.request`) is stale and changes nothing.
 */
export function step<T>(config: ReflectorConfig<T>, state: ReflectorState<T>, input: ReflectorInput, now: number): StepResult<T> {
  const effects: Effects<T> = [];
  return { state: stepInto(config, state, input, now, effects), effects };
}

/**
 * {@link step}, appending the effects to `out` instead of returning a new array: the shell's form, which hands
 * the same array to every step and empties it once the effects are carried out (no array and no result object
 * an input). The same transition: `step` is this with a fresh array.
 */
export function stepInto<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  input: ReflectorInput,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  return input.type === 'frame' ? frameInto(config, state, input.id, input.frame, now, out) : transition(config, state, input, now, out);
}

/**
 * The input `{ type: 'frame', id, frame }` given as its parts: the shell's form for a watch frame, which needs
 * no input object when nothing is queued before it (a frame a watch's request `id` brought).
 */
export function frameInto<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  id: number,
  frame: WatchFrame,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  const { phase } = state;
  if (id !== state.request || (phase.name !== 'watching' && phase.name !== 'streaming')) return state;
  return onFrame(config, state, phase, frame, now, out);
}

function transition<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  input: ReflectorInput,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  const { phase } = state;
  if (input.type === 'start') return phase.name === 'starting' ? relist(config, state, out) : state;
  if (input.id !== state.request) return state;
  switch (input.type) {
    case 'listed':
      return phase.name === 'listing' ? onListed(config, state, phase, input.page, now, out) : state;
    case 'listFailed':
      return phase.name === 'listing' ? onListFailed(state, phase, toInformerError(input.error, 'list'), out) : state;
    case 'timeoutPicked':
      return phase.name === 'opening' ? onTimeoutPicked(config, state, phase, input.timeoutSeconds, now, out) : state;
    case 'backoffDrawn':
      return phase.name === 'waiting' && !phase.timed ? startBackoff(config, state, phase, input.random, now, out) : state;
    case 'timer':
      return phase.name === 'waiting' && phase.timed ? afterWait(config, state, phase, out) : state;
    case 'answered':
      // The server is back: a wait after a failure it did not answer ends now; any other wait (its backoff) goes on.
      return phase.name === 'waiting' && phase.timed && phase.untilAnswered ? afterWait(config, state, phase, out) : state;
  }
  if (phase.name !== 'watching' && phase.name !== 'streaming') return state;
  switch (input.type) {
    case 'frame':
      return onFrame(config, state, phase, input.frame, now, out);
    case 'watchFailed':
      return finishWatch(state, phase, toInformerError(input.error, 'watch'), out);
    case 'watchEnded':
      return onWatchEnded(state, phase, now, out);
    case 'check':
      return onCheck(config, state, phase, now, out);
  }
}
