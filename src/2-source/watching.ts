import { InformerError, asStatus, errorFromStatus, isExpired, isObjectFault } from '../0-model/errors.ts';
import {
  isInitialEventsEnd,
  overlongQueryValue,
  type RawWatchEvent,
  type WatchFrame,
  type WatchOptions,
} from '../1-transport/listWatch.ts';
import { rawKey, rawResourceVersion } from '../0-model/keys.ts';
import { isOtherKind } from './decode.ts';
import { NO_FAILURES, afterWatch, idleAfterMs, paceAfterEvent, paceAfterIdle, type Pace, type WatchEnd } from './recovery.ts';
import { BACKOFF_START } from '../util/backoff.ts';
import type { Opening, ReflectorConfig, ReflectorState, Streaming, Watching } from './reflectorState.ts';
import { formatDuration } from '../util/formatDuration.ts';
import { proceed, replaceEvent, report, type Effects } from './transitions.ts';

const VERY_SHORT_WATCH_MS = 1000;

/** An open watch: plain, or a streaming list before its initial events are in. */
export type Open<T> = Watching | Streaming<T>;

/**
 * How soon a watch may end with no event before it counts as a failure: client-go's 1 s,
 * or half the timeout asked for when that is shorter, so that a short watch ended on
 * time by the server is not taken for one the server refused.
 */
function veryShortWatchMs(timeoutSeconds: number): number {
  return timeoutSeconds > 0 ? Math.min(VERY_SHORT_WATCH_MS, timeoutSeconds * 500) : VERY_SHORT_WATCH_MS;
}

// Deadlines are absolute times, and the next check is at least 1 ms away: with
// fractional virtual times, `now - lastFrameAt` can fall one float step short of a
// limit, and a check rescheduled "in 1e-12 ms" would run at the same instant forever.
const idleDeadline = <T>(config: ReflectorConfig<T>, pace: Pace, w: Open<T>) =>
  w.name === 'watching' ? w.lastFrameAt + idleAfterMs(config.idleTimeoutMs, config.busyIdleTimeoutMs, pace) : Infinity;
const stallDeadline = <T>(config: ReflectorConfig<T>, w: Open<T>) => w.lastFrameAt + (w.timeoutSeconds * 1000 + config.stallMarginMs);
const bookmarkDeadline = <T>(config: ReflectorConfig<T>, w: Open<T>) =>
  config.bookmarkTimeoutMs === undefined ? Infinity : w.lastBookmarkAt + config.bookmarkTimeoutMs;
/** A streaming list's whole-list budget (`maxListDurationMs`, from its request): its events may each come within the stall wait. */
const listDeadline = <T>(config: ReflectorConfig<T>, w: Open<T>) =>
  w.name === 'streaming' && config.maxListDurationMs > 0 ? w.started + config.maxListDurationMs : Infinity;
const nextCheckMs = <T>(config: ReflectorConfig<T>, pace: Pace, w: Open<T>, now: number) =>
  Math.max(
    1,
    Math.min(idleDeadline(config, pace, w), stallDeadline(config, w), bookmarkDeadline(config, w), listDeadline(config, w)) - now,
  );

/** Arms the deadline check (replacing any armed one) and records when it fires. */
function armCheck<T, W extends Open<T>>(config: ReflectorConfig<T>, state: ReflectorState<T>, w: W, now: number, out: Effects<T>): W {
  const delayMs = nextCheckMs(config, state.pace, w, now);
  out.push({ type: 'armCheck', id: state.request, delayMs });
  return { ...w, checkAt: now + delayMs };
}

/** The watch's timeout is drawn: open it. */
export function onTimeoutPicked<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  opening: Opening,
  timeoutSeconds: number,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  // A streaming list from a resourceVersion too long to send (an event's, a bookmark's) streams the latest state, as a relist lists it.
  const unsendable = overlongQueryValue('resourceVersion', state.lastRV) !== undefined;
  const rv = opening.streaming && (state.lastRVUnavailable || unsendable) ? '' : state.lastRV;
  const base = {
    fromList: opening.fromList,
    started: now,
    timeoutSeconds,
    lastFrameAt: now,
    lastBookmarkAt: now,
    events: 0,
    progress: false,
    propagateRV: !opening.streaming && rv !== '' && rv !== '0',
    checkAt: Infinity,
  };
  const open: Open<T> = opening.streaming
    ? { name: 'streaming', ...base, initial: new Map(), initialRejected: new Set() }
    : { name: 'watching', ...base, streamed: false };
  const options: WatchOptions = opening.streaming
    ? { resourceVersion: rv, resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true, allowWatchBookmarks: true, timeoutSeconds }
    : { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds };
  out.push({ type: 'emit', event: { type: 'watch', resourceVersion: rv } });
  out.push({ type: 'watch', id: state.request, options });
  return { ...state, phase: armCheck(config, state, open, now, out) };
}

/** Ends this watch and hands how it ended to the recovery rules. */
export function finishWatch<T>(state: ReflectorState<T>, w: Open<T>, end: WatchEnd['end'], out: Effects<T>): ReflectorState<T> {
  const error = typeof end === 'object' ? end : undefined;
  out.push({ type: 'disarmCheck' });
  if (error) report(out, error);
  const outcome = afterWatch({ end, progress: w.progress, initial: w.name === 'streaming', fromList: w.fromList }, state.counters);
  const { decision } = outcome;
  const streamed = w.name === 'streaming' || w.streamed;
  const memory = {
    ...state,
    counters: outcome.counters,
    // Progress since the last failure: the next backoff starts over.
    backoff: outcome.resetBackoff ? BACKOFF_START : state.backoff,
    // The server refused the streaming-list parameters: plain list + watch from now on.
    useWatchList: decision.next === 'listInstead' && error ? false : state.useWatchList,
    // A streaming list's watch expired: the next one asks for the latest state.
    lastRVUnavailable: streamed && error && isExpired(error) ? true : state.lastRVUnavailable,
  };
  return proceed(memory, decision, false, out);
}

/**
 * The deadline check: idle (resume, not a failure), stalled, no bookmark for too long, or a streaming list past its
 * whole-list budget (`ListTooLong`, as a paged one); else check again later.
 */
export function onCheck<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  w: Open<T>,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  if (now >= idleDeadline(config, state.pace, w)) return finishWatch({ ...state, pace: paceAfterIdle(state.pace) }, w, 'idle', out);
  if (now >= stallDeadline(config, w)) {
    return finishWatch(
      state,
      w,
      new InformerError('Timeout', `watch delivered nothing for ${now - w.lastFrameAt} ms; resuming`, { phase: 'watch' }),
      out,
    );
  }
  if (now >= listDeadline(config, w)) {
    const why =
      `the streaming list went on past maxListDurationMs ${config.maxListDurationMs} (${formatDuration(now - w.started)}, ` +
      `${w.events.toLocaleString('en-US')} initial events without the initial-events-end bookmark); relisting after the backoff ` +
      '(option maxListDurationMs)';
    return finishWatch(state, w, new InformerError('ListTooLong', why, { phase: 'watch' }), out);
  }
  if (now >= bookmarkDeadline(config, w)) {
    return finishWatch(
      state,
      w,
      new InformerError('Timeout', `watch brought no bookmark for ${now - w.lastBookmarkAt} ms; resuming`, { phase: 'watch' }),
      out,
    );
  }
  return { ...state, phase: armCheck(config, state, w, now, out) };
}

/** The server ended the watch. */
export function onWatchEnded<T>(state: ReflectorState<T>, w: Open<T>, now: number, out: Effects<T>): ReflectorState<T> {
  if (w.name === 'streaming') {
    const message = 'the server ended a streaming list before the initial-events-end bookmark; relisting with list + watch';
    report(out, new InformerError('WatchError', message, { phase: 'watch' }));
    return finishWatch(state, w, 'clean', out);
  }
  if (w.events === 0 && now - w.started < veryShortWatchMs(w.timeoutSeconds)) {
    return finishWatch(state, w, new InformerError('VeryShortWatch', 'the watch ended at once with no event', { phase: 'watch' }), out);
  }
  return finishWatch(state, w, 'clean', out);
}

/**
 * A frame came. A line that cannot be decoded ends the watch: resuming from the last
 * resourceVersion fully processed makes the server send the lost change again.
 */
export function onFrame<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  open: Open<T>,
  frame: WatchFrame,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  if (frame instanceof InformerError) {
    const w = seenAt(open, now);
    // A notice, or a fault of one object (a caller's keepObject threw): reported, and the watch goes on.
    if (!isObjectFault(frame)) return finishWatch({ ...state, phase: w }, w, frame.inPhase('watch'), out);
    report(out, frame);
    return { ...state, phase: w };
  }
  const rv = rawResourceVersion(frame.object);
  switch (frame.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      // The watch's and the reflector's state are copied once for the event (not once for the frame, then again).
      return onChange(config, state, open, frame, rv, now, out);
    case 'BOOKMARK':
      return onBookmark(config, state, { ...open, lastFrameAt: now, progress: true, lastBookmarkAt: now }, frame.object, rv, now, out);
    case 'ERROR': {
      const w = seenAt(open, now);
      const error = errorFromStatus(asStatus(frame.object)?.code ?? 500, frame.object, 'watch');
      return finishWatch({ ...state, phase: w }, w, frame.request === undefined ? error : error.forRequest(frame.request), out);
    }
    default:
      report(
        out,
        new InformerError('UnknownEventType', `unknown watch event type ${JSON.stringify(frame.type)}; skipped`, { phase: 'watch' }),
      );
      return { ...state, phase: seenAt(open, now), lastRV: open.propagateRV ? (rv ?? state.lastRV) : state.lastRV };
  }
}

/** The open watch, a frame having come at `now`. */
function seenAt<T>(open: Open<T>, now: number): Open<T> {
  return { ...open, lastFrameAt: now };
}

/**
 * ADDED, MODIFIED or DELETED: to the stream, or, while streaming a list, into its initial objects.
 * An object of another kind is reported and otherwise ignored: its resourceVersion is not recorded
 * and it does not count as an event (as client-go).
 */
function onChange<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  open: Open<T>,
  event: RawWatchEvent,
  rv: string | undefined,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  // A streaming list's initial events are a whole state, as a list's items: the informer may reuse its cached objects.
  const decoded = config.decode(event.object, 'watch', open.name === 'streaming');
  if (decoded instanceof InformerError && isOtherKind(decoded)) {
    report(out, decoded);
    return { ...state, phase: seenAt(open, now) };
  }
  // A watch from "" or "0" is past its synthetic ADDED events at its first other event; a streaming list never here.
  const propagateRV = open.propagateRV || (open.name === 'watching' && event.type !== 'ADDED');
  const lastRV = propagateRV ? (rv ?? state.lastRV) : state.lastRV;
  let counted: Open<T> = { ...open, lastFrameAt: now, events: open.events + 1, progress: true, propagateRV };
  if (counted.name === 'streaming' && config.maxListObjects > 0 && counted.events > config.maxListObjects) {
    return finishWatch({ ...state, phase: counted }, counted, streamTooLong(config, counted.events), out);
  }
  let pace = state.pace;
  if (counted.name === 'watching') {
    pace = paceAfterEvent(state.pace, now, config.idleTimeoutMs);
    // The adaptive idle rule: a busier type may bring the idle deadline before the armed check.
    if (idleDeadline(config, pace, counted) < counted.checkAt) counted = armCheck(config, { ...state, pace }, counted, now, out);
  }
  const next = { ...state, lastRV, pace, phase: counted };
  if (decoded instanceof InformerError) {
    report(out, decoded);
    const key = rawKey(event.object);
    if (key === undefined) return next;
    if (counted.name === 'streaming') {
      counted.initial.delete(key);
      if (event.type === 'DELETED') counted.initialRejected.delete(key);
      else counted.initialRejected.add(key);
      return next;
    }
    // The cache keeps its last valid object; a deletion deletes all the same (under the key a transform renamed it to).
    if (event.type === 'DELETED') {
      const renames = config.decode.renames;
      const cached = renames ? renames.cachedKey(key) : key;
      renames?.forget(key);
      out.push({ type: 'emit', event: { type: 'deletedKey', key: cached, resourceVersion: lastRV } });
    }
    return next;
  }
  // A deleted object's rename is forgotten (the decoder kept it: see Renames).
  if (event.type === 'DELETED' && config.decode.renames && config.decode.renames.size > 0) {
    const key = rawKey(event.object);
    if (key !== undefined) config.decode.renames.forget(key);
  }
  if (counted.name === 'streaming') {
    const key = rawKey(event.object) ?? '';
    counted.initialRejected.delete(key);
    if (event.type === 'DELETED') counted.initial.delete(key);
    else counted.initial.set(key, decoded);
    return next;
  }
  const type = event.type === 'ADDED' ? 'added' : event.type === 'MODIFIED' ? 'modified' : 'deleted';
  out.push({ type: 'emit', event: { type, object: decoded, resourceVersion: lastRV } });
  return next;
}

/**
 * A streaming list that goes on past `maxListObjects` initial events without its initial-events-end bookmark: dropped
 * as a paged list past it is (`ListTooLong`; a streaming list that breaks is relisted after the backoff). Every event
 * counts, a repeated key too: a real server sends each object once before the bookmark.
 */
function streamTooLong<T>(config: ReflectorConfig<T>, events: number): InformerError {
  const why =
    `the streaming list went on past maxListObjects ${config.maxListObjects} (${events.toLocaleString('en-US')} initial events ` +
    'without the initial-events-end bookmark); relisting after the backoff (option maxListObjects)';
  return new InformerError('ListTooLong', why, { phase: 'watch' });
}

/** A bookmark: the rv moves on; the initial-events-end one completes a streaming list (replace, then a plain watch). */
function onBookmark<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  w: Open<T>,
  object: unknown,
  rv: string | undefined,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  const lastRV = rv ?? state.lastRV;
  if (w.name !== 'streaming' || !isInitialEventsEnd(object)) {
    out.push({ type: 'emit', event: { type: 'bookmark', resourceVersion: lastRV } });
    // A streaming list's resourceVersion is the one its initial-events-end bookmark brings: a retry streams from the last synced.
    if (w.name === 'streaming') return { ...state, phase: w };
    return { ...state, lastRV, phase: { ...w, propagateRV: true } };
  }
  const { initial, initialRejected, name: _, ...open } = w;
  const plain: Watching = { ...open, name: 'watching', streamed: true, propagateRV: true };
  const items = [...initial.values()];
  const renames = config.decode.renames;
  const rejectedKeys = renames ? [...initialRejected].map((key) => renames.cachedKey(key)) : [...initialRejected];
  renames?.listed();
  // The idle rule starts now that there is something to resume from.
  out.push({ type: 'disarmCheck' });
  const watching = armCheck(config, state, plain, now, out);
  out.push({ type: 'emit', event: replaceEvent(items, lastRV, rejectedKeys) });
  return { ...state, lastRV, lastRVUnavailable: false, counters: NO_FAILURES, phase: watching };
}
