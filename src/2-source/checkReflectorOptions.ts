/**
 * The checks of the reflector's numeric options (durations, sizes, counts, `backoff`'s), shared by every entry that
 * takes them: the informers' (5-informer/checkOptions.ts, which adds the transport's) and a direct caller's of
 * `listAndWatch` or `Backoff`. A `TypeError` naming the option and what was given.
 */
import { described } from '../util/optionNames.ts';

/**
 * The numeric options (durations, sizes, counts): each a number ≥ 0 or `Infinity` (0 and Infinity turn a bound off where
 * its doc says so). NaN (`Number(process.env.X)` with X unset) or a negative number is refused: before, it meant the
 * default in one place (byte limits), no bound at all in another (`requestTimeoutMs`) and a deadline re-armed every
 * millisecond in a third (`stallMarginMs`).
 *
 * Not informerFromSource.ts's `REFLECTOR_OPTIONS`, another list on purpose: those are the options an informer hands
 * to the reflector (`watchList`, `backoff`, `scheduler` and `random` too), these are the ones checked as numbers (an
 * informer's `maxNamespaceWatches` too, which no reflector reads). checkOptions.ts's `EveryNumberChecked` fails to
 * compile when a numeric option of `ListAndWatchOptions` is missing here.
 */
export const NUMERIC_OPTIONS = [
  'maxNamespaceWatches',
  'pageSize',
  'minWatchTimeoutSeconds',
  'idleTimeoutMs',
  'busyIdleTimeoutMs',
  'stallMarginMs',
  'bookmarkTimeoutMs',
  'maxListPages',
  'maxListObjects',
  'maxListDurationMs',
] as const;
export const BACKOFF_NUMERIC_OPTIONS = ['initialMs', 'maxMs', 'factor', 'jitter', 'resetAfterMs'] as const;
/**
 * The numeric options whose 0 is no bound to turn off but a fault (docs/api.md, "0 in a timing option"), refused as NaN
 * is: `minWatchTimeoutSeconds` (0 asks the server for no timeout, Infinity is no number to send: finite too) and the
 * backoff's `initialMs` and `maxMs` (a wait of 0 that never grows: a retry loop against a failing server; `initialMs`
 * finite too).
 */
const POSITIVE: Readonly<Record<string, 'finite' | 'any'>> = {
  minWatchTimeoutSeconds: 'finite',
  // Infinity would be a first wait of the longest timer (24.8 days): an informer stopped by a transient fault.
  'backoff.initialMs': 'finite',
  'backoff.maxMs': 'any',
};

/** Each of `names` in `o` (given) is a number ≥ 0 (Infinity too), else a `TypeError` naming it (`prefix` + name). */
export function checkNumbers(caller: string, o: Record<string, unknown>, names: readonly string[], prefix: string): void {
  for (const name of names) {
    const value = o[name];
    const positive = Object.hasOwn(POSITIVE, prefix + name) ? POSITIVE[prefix + name] : undefined;
    if (value === undefined) continue;
    if (positive !== undefined && !(typeof value === 'number' && value > 0 && (positive === 'any' || value < Infinity)))
      throw new TypeError(
        `${caller}: \`${prefix}${name}\` must be a number > 0${positive === 'finite' ? ' (finite)' : ' or Infinity'}, got ${described(value)}`,
      );
    if (!(typeof value === 'number' && value >= 0))
      throw new TypeError(`${caller}: \`${prefix}${name}\` must be a number ≥ 0 or Infinity, got ${described(value)}`);
  }
}

/**
 * A direct caller's `listAndWatch` options (the informers' entries check them with the rest, checkInformerOptions): the
 * numbers as an informer's, `backoff` too, so that `minWatchTimeoutSeconds: 0` is refused here as there, not replaced
 * by the default in silence.
 */
export function checkReflectorOptions(caller: string, options: unknown): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`${caller}: options must be an object, got ${described(options)}`);
  const o = options as Record<string, unknown>;
  checkNumbers(caller, o, NUMERIC_OPTIONS, '');
  if (o.backoff !== undefined) checkBackoffOptions(caller, o.backoff);
}

/** `backoff`'s options, each named `backoff.<name>` as an informer's are. */
export function checkBackoffOptions(caller: string, backoff: unknown): void {
  if (typeof backoff !== 'object' || backoff === null || Array.isArray(backoff))
    throw new TypeError(`${caller}: \`backoff\` must be an object, got ${described(backoff)}`);
  checkNumbers(caller, backoff as Record<string, unknown>, BACKOFF_NUMERIC_OPTIONS, 'backoff.');
}
