import { MAX_RETRY_AFTER_SECONDS, clampRetryAfter, isExpired, isResumable, type InformerError } from '../0-model/errors.ts';

export { MAX_RETRY_AFTER_SECONDS };

/**
 * The reflector's recovery rules in one place: after a watch ends or a list
 * fails, what to do next (resume the watch from the last resourceVersion, or
 * relist) and when (at once, or after the backoff). Pure and time-free, so
 * the rules read as a table and are tested as one (`recovery.spec.ts`).
 *
 * The rules are written once, as the table in docs/semantics.md ("The rules, as `step` carries them
 * out"), which `spec/2-source/step.spec.ts` reads and checks row by row against `step`: read them
 * there, and add a row there with any change here.
 *
 * "Progress" is at least one event or bookmark received; it resets the backoff
 * (`ReflectorMemory.backoff`, the rule of backoff.ts, whose defaults are client-go's).
 */
export type Next =
  /** Watch again from the last resourceVersion. */
  | 'resume'
  /** List again (from the last resourceVersion, as client-go). */
  | 'relist'
  /** List again at resourceVersion "": the last one is unusable. */
  | 'relistLatest'
  /**
   * A plain list this time: after the server refused the streaming-list parameters (then
   * plain lists from now on), or after a stream that ended before its initial events (later
   * relists stream again).
   */
  | 'listInstead'
  /**
   * Ask the same continue page again (the list goes on): after a 429, or a 5xx with `Retry-After`, on a continue
   * page, as client-go's rest client retries a request in place (see {@link MAX_PAGE_RETRIES}).
   */
  | 'retryPage';

export interface Decision {
  readonly next: Next;
  /** Wait the backoff first (and at least `retryAfterSeconds`). */
  readonly backoff: boolean;
  /** Seconds the server asked for, clamped to {@link MAX_RETRY_AFTER_SECONDS}. */
  readonly retryAfterSeconds?: number;
  /**
   * No server answered (the error is `unreachable`: refused, reset, DNS, a connect timeout): the backoff
   * ends early when the server answers again (the `answered` input), where the ListWatch can tell.
   * Never after a failure the server answered (5xx, 429, 410 …): those keep client-go's backoff.
   */
  readonly untilAnswered?: boolean;
}

/** A decision to back off after a failure no server answered may end when the server answers again. */
function untilAnswered(decision: Decision, error: InformerError | undefined): Decision {
  return decision.backoff && error?.unreachable === true ? { ...decision, untilAnswered: true } : decision;
}

/** How one watch ended. */
export interface WatchEnd {
  /** `clean`: the server ended the stream; `idle`: we ended it after silence; else the fault. */
  readonly end: 'clean' | 'idle' | InformerError;
  /** Events or bookmarks received before it ended. */
  readonly progress: boolean;
  /** A streaming list that had not delivered its initial events yet. */
  readonly initial: boolean;
  /** It started from the resourceVersion of a list just received (not from a resume). */
  readonly fromList?: boolean;
}

/** What the rules remember between watches. */
export interface RecoveryCounters {
  /** Watches in a row broken by a fault after progress (reset by a clean end, an idle end or a list). */
  readonly brokenResumes: number;
  /** Watches in a row that failed without the resourceVersion moving (reset when it moves). */
  readonly failuresAtSameRV: number;
}

export const NO_FAILURES: RecoveryCounters = { brokenResumes: 0, failuresAtSameRV: 0 };

/** Broken resumes in a row after which a relist replaces resuming again. */
export const BROKEN_RESUMES_BEFORE_RELIST = 3;

/**
 * True for kube-apiserver's "Too large resource version" (504 Timeout with the
 * ResourceVersionTooLarge cause), as client-go's isTooLargeResourceVersionError.
 */
export function isTooLargeResourceVersion(error: InformerError): boolean {
  if (error.status !== 504) return false;
  const status = error.statusObject as { message?: unknown; details?: { causes?: unknown } } | null | undefined;
  const causes = Array.isArray(status?.details?.causes) ? (status.details.causes as { reason?: unknown; message?: unknown }[]) : [];
  if (causes.some((cause) => cause?.reason === 'ResourceVersionTooLarge')) return true;
  // Servers older than the cause type say it in the message only.
  const text = [status?.message, ...causes.map((cause) => cause?.message)];
  return text.some((m) => typeof m === 'string' && m.includes('Too large resource version'));
}

/** The error's `Retry-After`, honoured (clamped), as the field of a decision; nothing when there was none. */
function waitAsked(seconds: number | undefined): { retryAfterSeconds?: number } {
  return seconds === undefined ? {} : { retryAfterSeconds: clampRetryAfter(seconds) };
}

/**
 * After a watch ended: what next, the counters after it, and whether its progress
 * resets the backoff (not for a streaming list that broke before its initial events
 * were in, nor for a very short watch: both count as failures whatever they carried).
 */
export function afterWatch(
  ended: WatchEnd,
  counters: RecoveryCounters,
): { decision: Decision; counters: RecoveryCounters; resetBackoff: boolean } {
  const { end, progress } = ended;
  const atSameRV = progress ? 0 : counters.failuresAtSameRV;
  const resetBackoff = progress && !ended.initial && !(typeof end === 'object' && end.reason === 'VeryShortWatch');
  const fault = typeof end === 'object' ? end : undefined;
  const decide = (decision: Decision, next: RecoveryCounters) => ({
    decision: untilAnswered(decision, fault),
    counters: next,
    resetBackoff,
  });

  if (end === 'clean' || end === 'idle') {
    // A streaming list that ended before its initial events: a plain list this time.
    if (ended.initial) return decide({ next: 'listInstead', backoff: true }, NO_FAILURES);
    return decide({ next: 'resume', backoff: false }, NO_FAILURES);
  }

  const error = end;
  /** Counters after a failure that did not move the resourceVersion; what the server asked to wait. */
  const failed: RecoveryCounters = { brokenResumes: 0, failuresAtSameRV: atSameRV + 1 };
  const retryAfter = waitAsked(error.retryAfterSeconds);
  if (ended.initial && (error.reason === 'Invalid' || error.reason === 'BadRequest')) {
    // The server refused the streaming-list parameters (1.20 says 422, others 400).
    return decide({ next: 'listInstead', backoff: false }, NO_FAILURES);
  }
  // The server is behind the watch's resourceVersion: relist at it after the backoff, unpaged (a watch cache answers it
  // once caught up), as client-go's watch() (no case for it: ListAndWatch returns, the backoff, then list()). Only a
  // list answered 504 too asks for "" (afterListFailure): at once at "" would put a list from etcd on every 504.
  // A streaming list is client-go's list here (watchList(): the RV made unavailable, at once at "").
  if (isTooLargeResourceVersion(error)) {
    if (ended.initial) return decide({ next: 'relistLatest', backoff: false }, NO_FAILURES);
    return decide({ next: 'relist', backoff: true, ...retryAfter }, failed);
  }
  // Only a watch from a list just received that is at once too old hints at a relist loop: back off then.
  if (isExpired(error)) return decide({ next: 'relist', backoff: !progress && ended.fromList === true }, NO_FAILURES);
  // A streaming list that broke before its initial events were all in is a failed list, whatever
  // it delivered: relist after the backoff (resuming is impossible, and relisting at once would
  // stream the whole collection again and again).
  if (ended.initial) return decide({ next: 'relist', backoff: true, ...retryAfter }, failed);
  if (error.reason === 'TooManyRequests' || error.reason === 'VeryShortWatch') {
    // (A very short watch may have carried a bookmark: progress does not excuse it.)
    return decide({ next: 'resume', backoff: true, ...retryAfter }, failed);
  }
  if (error.reason === 'MalformedLine') {
    // The server replays from the last resourceVersion fully processed: the lost change comes again.
    const failures = atSameRV + 1;
    if (failures === 1) return decide({ next: 'resume', backoff: false }, { brokenResumes: 0, failuresAtSameRV: failures });
    return decide({ next: 'relist', backoff: failures > 2 }, { brokenResumes: 0, failuresAtSameRV: failures });
  }
  if (isResumable(error)) {
    // A 503's Retry-After counts on a watch as on a list.
    if (!progress) return decide({ next: 'resume', backoff: true, ...retryAfter }, failed);
    const broken = counters.brokenResumes + 1;
    // Relist, but after the backoff: a link that cuts every watch after its first event would
    // otherwise buy a whole list every third event, with no pause.
    if (broken >= BROKEN_RESUMES_BEFORE_RELIST) return decide({ next: 'relist', backoff: true }, NO_FAILURES);
    return decide({ next: 'resume', backoff: false }, { brokenResumes: broken, failuresAtSameRV: 0 });
  }
  // 401, 403, 404, 400 …: something may change (credentials rotated, a CRD installed); relist after a backoff.
  return decide({ next: 'relist', backoff: true, ...retryAfter }, failed);
}

/**
 * Times in a row a continue page is asked again after a throttling answer before the list is given up (relisted
 * after the backoff): client-go's rest client retries a request up to 10 times (`maxRetries`, rest/request.go).
 */
export const MAX_PAGE_RETRIES = 10;

/**
 * A failure the server asks to be retried in place: a 429, or any status ≥ 500 carrying `Retry-After` (client-go's
 * `checkWait`, rest/with_retry.go). A 429 without `Retry-After` too: throttling, never a reason to drop the pages read.
 */
function isRetriedInPlace(error: InformerError): boolean {
  const status = error.status ?? 0;
  return status === 429 || (status >= 500 && error.retryAfterSeconds !== undefined);
}

/**
 * After a list failed: list again at once at resourceVersion "" when the one
 * asked for is gone (410) or not reached yet (too large), else after the
 * backoff. `continued`: the failure was on a continue page, asked again `retries` times in a row already: after a
 * 429 or a 5xx with `Retry-After` it is asked again (`retryPage`, after the backoff and at least the Retry-After), up
 * to {@link MAX_PAGE_RETRIES} times, instead of throwing the pages read away (client-go retries the request in place).
 * `expiredTokens`: continue tokens expired in a row, this one counted; from the second the restart waits the backoff
 * (a paged list slower than etcd's compaction restarts after each, and would otherwise never pause).
 */
export function afterListFailure(
  error: InformerError,
  askedResourceVersion: string,
  continued: boolean,
  retries = 0,
  expiredTokens = 0,
): Decision {
  if (isTooLargeResourceVersion(error)) return { next: 'relistLatest', backoff: false };
  if (isExpired(error) && (continued || askedResourceVersion !== ''))
    return { next: 'relistLatest', backoff: continued && expiredTokens > 1 };
  if (continued && retries < MAX_PAGE_RETRIES && isRetriedInPlace(error))
    return { next: 'retryPage', backoff: true, ...waitAsked(error.retryAfterSeconds) };
  return untilAnswered({ next: 'relist', backoff: true, ...waitAsked(error.retryAfterSeconds) }, error);
}

/**
 * The adaptive idle rule's memory: how busy the watched type has been. Only events of
 * plain watches count (not bookmarks, not a streaming list's initial objects).
 */
export interface Pace {
  /** When the last event came; undefined: none yet. */
  readonly lastEventAt: number | undefined;
  /** The longest recent gap between two events (ms), fading by a quarter per event; undefined: no gap seen yet. */
  readonly gapMs: number | undefined;
  /** A watch was ended for silence since the last event: the next one waits the full `idleTimeoutMs`. */
  readonly silenced: boolean;
}

export const NO_PACE: Pace = { lastEventAt: undefined, gapMs: undefined, silenced: false };

/** A busy watch is resumed after `busyIdleTimeoutMs`, or this many times its recent gap between events if longer. */
export const BUSY_GAP_FACTOR = 3;
/** How much of the longest recent gap is kept at each new event. */
const GAP_FADE = 0.75;

/**
 * An event came at `now`. The gap since the one before counts (at most `idleTimeoutMs`:
 * longer only means quiet), except across a silence that ended a watch: that one was judged already.
 */
export function paceAfterEvent(pace: Pace, now: number, idleTimeoutMs: number): Pace {
  if (pace.lastEventAt === undefined || pace.silenced) return { ...pace, lastEventAt: now, silenced: false };
  const gap = Math.min(now - pace.lastEventAt, idleTimeoutMs > 0 ? idleTimeoutMs : Infinity);
  return { lastEventAt: now, gapMs: Math.max(gap, (pace.gapMs ?? gap) * GAP_FADE), silenced: false };
}

/** A watch was ended for silence: the next one waits the full `idleTimeoutMs` until an event comes. */
export function paceAfterIdle(pace: Pace): Pace {
  return { ...pace, silenced: true };
}

/**
 * How long a watch may stay silent (no event, no bookmark) before it is resumed, in ms
 * (Infinity: never). A quiet type waits `idleTimeoutMs` (60 s); a busy one, whose recent
 * gap between events is short, waits `max(busyIdleTimeoutMs, BUSY_GAP_FACTOR × gap)`,
 * never longer than `idleTimeoutMs`. kube-apiserver sends a bookmark about every minute
 * only once the type changed, so a busy watch silent for many of its gaps is stalled,
 * while a quiet one's silence is normal. `busyIdleTimeoutMs: 0` turns the busy rule off.
 */
export function idleAfterMs(idleTimeoutMs: number, busyIdleTimeoutMs: number, pace: Pace): number {
  const quiet = idleTimeoutMs > 0 ? idleTimeoutMs : Infinity;
  if (busyIdleTimeoutMs <= 0 || pace.gapMs === undefined || pace.silenced) return quiet;
  return Math.min(quiet, Math.max(busyIdleTimeoutMs, BUSY_GAP_FACTOR * pace.gapMs));
}
