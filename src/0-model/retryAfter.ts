/**
 * `Retry-After`: the one parser (delta-seconds or an HTTP date), used by the transport (429 and 503 answers of
 * the API server, capped at {@link MAX_RETRY_AFTER_SECONDS}) and by the CLI's webhook and Slack sinks (with their
 * own, shorter cap). Every byte of the header may be hostile: a value longer than {@link MAX_RETRY_AFTER_CHARS}
 * is not read, and whatever is read comes out a finite number of seconds within `[0, maxSeconds]`, or undefined.
 */

/** The longest `Retry-After` honoured, in seconds: a larger one would overflow Node's timers, and is not sane. */
export const MAX_RETRY_AFTER_SECONDS = 300;

/** The longest header value read (an HTTP date is 29 characters): a longer one is no `Retry-After`. */
export const MAX_RETRY_AFTER_CHARS = 64;

const DELTA_SECONDS = /^\s*-?\d+\s*$/;
const HTTP_DATE_SHAPE = /[A-Za-z]{3}.*\d\d:\d\d:\d\d/;

/** A server's `Retry-After` (seconds) as honoured: at least 0, at most `maxSeconds` ({@link MAX_RETRY_AFTER_SECONDS}). */
export function clampRetryAfter(seconds: number, maxSeconds: number = MAX_RETRY_AFTER_SECONDS): number {
  return Math.min(maxSeconds, Math.max(0, seconds));
}

/** How {@link parseRetryAfter} reads a header. */
export interface RetryAfterOptions {
  /** The clock an HTTP date is measured from (ms since the epoch). Default `Date.now()`. */
  readonly now?: number;
  /** The longest wait given back, in seconds. Default {@link MAX_RETRY_AFTER_SECONDS}. */
  readonly maxSeconds?: number;
}

/**
 * Seconds from a `Retry-After` header (delta-seconds or an HTTP date; the first of several values), at least 0 and
 * at most `maxSeconds` (default {@link MAX_RETRY_AFTER_SECONDS}): a larger value (or a far date) would overflow
 * Node's timers, which then fire at once, and nothing should stand still for days on one header. Undefined for a
 * missing, empty, overlong or unreadable value (seconds must be whole digits, as client-go reads them; an HTTP date is read too,
 * which client-go ignores and RFC 9110 allows). The second argument may be `now` alone (ms), as before.
 */
export function parseRetryAfter(
  header: string | readonly string[] | null | undefined,
  options: RetryAfterOptions | number = {},
): number | undefined {
  const { now = Date.now(), maxSeconds = MAX_RETRY_AFTER_SECONDS } = typeof options === 'number' ? { now: options } : options;
  const value = typeof header === 'string' ? header : header?.[0];
  if (typeof value !== 'string' || value.length > MAX_RETRY_AFTER_CHARS || value.trim() === '') return undefined;
  // delta-seconds is whole digits (RFC 9110 §10.2.3; client-go reads it with strconv.Atoi): not `1e3`, `0x10` or `1.5`.
  if (DELTA_SECONDS.test(value)) return clampRetryAfter(Number(value), maxSeconds);
  // An HTTP date names its day and month and has a time of day: V8's Date.parse would also read `1.5` as a date.
  if (!HTTP_DATE_SHAPE.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : clampRetryAfter(Math.ceil((date - now) / 1000), maxSeconds);
}
