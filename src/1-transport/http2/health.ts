import type { ClientHttp2Session } from 'node:http2';
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';

/** The default of {@link Http2Options.readIdleMs}. */
export const DEFAULT_READ_IDLE_MS = 10_000;
/** The default of {@link Http2Options.pingTimeoutMs}. */
export const DEFAULT_PING_TIMEOUT_MS = 10_000;

/** HTTP/2 connection health checks (see docs/transport.md, "HTTP/2"). */
export interface Http2Options {
  /**
   * After this long (ms) without a byte read on a connection that carries a
   * request, the client sends a PING. Default 10 s; `0` or `Infinity` sends none.
   */
  readonly readIdleMs?: number;
  /** A PING not answered within this long (ms) closes the connection, failing every request on it. Default 10 s. */
  readonly pingTimeoutMs?: number;
  /** Runs the PING timers (tests pass a virtual-time scheduler). Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/**
 * The PING rule of one HTTP/2 connection, as client-go's `ReadIdleTimeout` and
 * `PingTimeout`: while the connection carries at least one request, a read
 * idle period without a byte read sends a PING; no answer within the ping
 * timeout declares the connection dead (`onDead`). A connection that carries
 * no request has no timer (it costs nothing, and keeps no process alive); the
 * next request on it checks it at once if it has been quiet that long.
 */
export class PingHealth {
  private lastRead: number;
  private active = 0;
  private idleTimer: Subscription | undefined;
  private pingTimer: Subscription | undefined;
  private stopped = false;
  private readonly scheduler: SchedulerLike;
  private readonly readIdleMs: number | undefined;
  private readonly pingTimeoutMs: number;

  private readonly session: ClientHttp2Session;
  private readonly onDead: (error: Error) => void;

  constructor(session: ClientHttp2Session, options: Http2Options, onDead: (error: Error) => void) {
    this.session = session;
    this.onDead = onDead;
    this.scheduler = options.scheduler ?? asyncScheduler;
    const idle = options.readIdleMs ?? DEFAULT_READ_IDLE_MS;
    this.readIdleMs = idle > 0 && idle !== Infinity ? idle : undefined;
    this.pingTimeoutMs = options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS;
    this.lastRead = this.scheduler.now();
  }

  /** A byte was read (a frame, a chunk, a PING answer). */
  read(): void {
    this.lastRead = this.scheduler.now();
  }

  /** A request started (`+1`) or ended (`-1`) on the connection. */
  streams(delta: 1 | -1): void {
    this.active += delta;
    if (this.active === 1 && delta === 1)
      this.arm(this.readIdleMs === undefined ? undefined : Math.max(0, this.readIdleMs - this.idleFor()));
    if (this.active === 0) this.clear();
  }

  /** The connection is gone: no timer from now on. */
  stop(): void {
    this.stopped = true;
    this.clear();
  }

  /** Whether a PING is waiting for its answer. */
  get pinging(): boolean {
    return this.pingTimer !== undefined;
  }

  /** Whether timers are pending (for tests). */
  get timers(): number {
    return (this.idleTimer ? 1 : 0) + (this.pingTimer ? 1 : 0);
  }

  private idleFor(): number {
    return this.scheduler.now() - this.lastRead;
  }

  private clear(): void {
    this.idleTimer?.unsubscribe();
    this.pingTimer?.unsubscribe();
    this.idleTimer = this.pingTimer = undefined;
  }

  private arm(delay: number | undefined): void {
    this.idleTimer?.unsubscribe();
    this.idleTimer = undefined;
    if (delay === undefined || this.stopped || this.active === 0) return;
    this.idleTimer = this.scheduler.schedule(() => {
      this.idleTimer = undefined;
      this.check();
    }, delay);
  }

  private check(): void {
    const idle = this.idleFor();
    const readIdleMs = this.readIdleMs!;
    if (idle < readIdleMs) return this.arm(readIdleMs - idle);
    if (this.pingTimer) return;
    this.pingTimer = this.scheduler.schedule(() => {
      this.pingTimer = undefined;
      if (this.stopped) return;
      const error = new Error(
        `the HTTP/2 connection answered no PING within ${this.pingTimeoutMs} ms (nothing read for ${this.idleFor()} ms)`,
      );
      (error as NodeJS.ErrnoException).code = 'ERR_HTTP2_PING_TIMEOUT';
      this.stop();
      this.onDead(error);
    }, this.pingTimeoutMs);
    try {
      this.session.ping((error) => {
        if (error || this.stopped) return;
        this.read();
        this.pingTimer?.unsubscribe();
        this.pingTimer = undefined;
        this.arm(readIdleMs);
      });
    } catch {
      // Too many PINGs outstanding or the session is closing: the timeout decides.
    }
  }
}
