/**
 * What a reconcile asks for next. Return nothing (or `done`) when the object
 * is as it should be.
 */
export type ReconcileResult =
  | void
  | undefined
  | { readonly type: 'done' }
  /** Try again, rate-limited (per-key exponential backoff). */
  | { readonly type: 'requeue' }
  /**
   * Look again after this long, whatever happens meanwhile (the backoff is reset). Only a delay > 0 waits:
   * ≤ 0 is a `requeue`; a delay that is not a finite number is an `error` outcome (`HandlerError`), retried rate-limited.
   */
  | { readonly type: 'requeueAfter'; readonly delayMs: number };

export const done = (): ReconcileResult => ({ type: 'done' });
export const requeue = (): ReconcileResult => ({ type: 'requeue' });
export const requeueAfter = (delayMs: number): ReconcileResult => ({ type: 'requeueAfter', delayMs });

/**
 * Throw (or error with) this from a reconcile for a failure that retrying
 * cannot fix: it is reported, the key's backoff is reset, and it is not requeued.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
}

/** How one reconcile of a key ended. */
export type ReconcileOutcome =
  | { readonly key: string; readonly result: 'success'; readonly durationMs: number }
  | { readonly key: string; readonly result: 'requeue'; readonly durationMs: number }
  | { readonly key: string; readonly result: 'requeueAfter'; readonly delayMs: number; readonly durationMs: number }
  | { readonly key: string; readonly result: 'error'; readonly error: unknown; readonly requeues: number; readonly durationMs: number }
  | { readonly key: string; readonly result: 'terminal'; readonly error: unknown; readonly durationMs: number };
