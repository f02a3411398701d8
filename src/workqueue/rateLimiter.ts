/** Decides how long an item waits before its next retry (client-go `TypedRateLimiter`). */
export interface RateLimiter<K> {
  /** Milliseconds to wait before retrying `item`; calling it records one more failure/reservation. */
  when(item: K): number;
  /** Stops tracking the item (call on success); its backoff starts over. */
  forget(item: K): void;
  /** Failures recorded for the item since it was last forgotten. */
  numRequeues(item: K): number;
}
