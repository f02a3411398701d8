/** The shape of a reconnect backoff (defaults are client-go's reflector backoff). */
export interface BackoffOptions {
  /** First wait before jitter. Default 800 ms. */
  readonly initialMs?: number;
  /** Largest wait before jitter. Default 30 s. */
  readonly maxMs?: number;
  /** Growth per failure. Default 2. */
  readonly factor?: number;
  /** Each wait is `d + random() * jitter * d`, so in [d, (1 + jitter) d). Default 1. */
  readonly jitter?: number;
  /** Start again from `initialMs` once this long has passed since the last backoff. Default 2 min. */
  readonly resetAfterMs?: number;
}

/**
 * Exponential backoff with jitter and a reset after a quiet period, as
 * client-go's `NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`:
 * waits fall in [0.8, 1.6), [1.6, 3.2), … up to [30, 60) seconds, and a
 * failure more than two minutes after the previous one starts over.
 *
 * Pure: the caller passes the current time, so it runs in virtual time.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly random: () => number;
  private currentMs: number;
  private lastAt: number | undefined;

  constructor(options: BackoffOptions = {}, random: () => number = Math.random) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.random = random;
    this.currentMs = this.initialMs;
  }

  /** Starts over from `initialMs` (the source made progress since the last failure). */
  reset(): void {
    this.currentMs = this.initialMs;
    this.lastAt = undefined;
  }

  /** How long to wait after a failure that happens at `now`. */
  next(now: number): number {
    if (this.lastAt !== undefined && now - this.lastAt > this.resetAfterMs) this.currentMs = this.initialMs;
    this.lastAt = now;
    const base = this.currentMs;
    this.currentMs = Math.min(base * this.factor, this.maxMs);
    return base + this.random() * this.jitter * base;
  }
}
