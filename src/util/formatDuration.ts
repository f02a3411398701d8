/**
 * A duration for a message, the one formatter. `minutes` (the default): `59.9 s` under a minute, `61 min 5 s` past it
 * (a list's hour-long bound reads better in minutes). `seconds`: whole seconds at any length (`65 s`), for a report that
 * compares a wait with a bound said in seconds (the controller's "no reconcile could start for 60 s (reported after 60 s)").
 */
export function formatDuration(ms: number, style: 'minutes' | 'seconds' = 'minutes'): string {
  if (style === 'seconds') return `${Math.round(ms / 1000)} s`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms - minutes * 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}
