/**
 * The checks of the reflector's numeric options (durations, sizes, counts, `backoff`'s), shared by every entry that
 * takes them: the informers' (5-informer/checkOptions.ts, which adds the transport's) and a direct caller's of
 * `listAndWatch` or `Backoff`. A `TypeError` naming the option and what was given.
 */

/** What was given, briefly: `"shop"`, `an array (["shop","ops"])`, `an object ({"app":"web"})`, `a number (5)`. */
export function described(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (typeof value !== 'object') return `a ${typeof value} (${String(value)})`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = '';
  }
  if (value instanceof Set || value instanceof Map) text = JSON.stringify([...value].slice(0, 10)) ?? '';
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  const kind = Array.isArray(value) ? 'an array' : value instanceof Set ? 'a Set' : value instanceof Map ? 'a Map' : 'an object';
  return `${kind}${shown ? ` (${shown})` : ''}`;
}

/**
 * The numeric options (durations, sizes, counts): each a number ≥ 0 or `Infinity` (0 and Infinity turn a bound off where
 * its doc says so). NaN (`Number(process.env.X)` with X unset) or a negative number is refused: before, it meant the
 * default in one place (byte limits), no bound at all in another (`requestTimeoutMs`) and a deadline re-armed every
 * millisecond in a third (`stallMarginMs`).
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
