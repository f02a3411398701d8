import type { ClientHttp2Session } from 'node:http2';
import type { SchedulerLike, Subscription } from 'rxjs';
import { monotonicScheduler } from '../../util/monotonicNow.ts';
import { timerMs } from '../../util/scheduleAfter.ts';

/** The default of {@link Http2Options.readIdleMs}. */
export const DEFAULT_READ_IDLE_MS = 5_000;
/** The default of {@link Http2Options.pingTimeoutMs}. */
export const DEFAULT_PING_TIMEOUT_MS = 5_000;
/**
 * The default of {@link Http2Options.idleTimeoutMs}: client-go's `IdleConnTimeout`. client-go/transport/cache.go
 * builds its transport through apimachinery's `utilnet.SetTransportDefaults`, which (pkg/util/net/http.go) sets
 * `IdleConnTimeout` to Go's `http.DefaultTransport`'s, 90 s; its HTTP/2 connections are closed after it too.
 */
export const DEFAULT_IDLE_CONNECTION_MS = 90_000;
/** The default of {@link Http2Options.maxConnections}. */
export const DEFAULT_MAX_CONNECTIONS = 8;
/**
 * A PING timeout that fires later than this (ms) after it was due was delayed by a blocked event loop: the answer
 * may be waiting unread, so a fresh PING is sent instead of declaring the connection dead.
 */
export const PING_LAG_MARGIN_MS = 1_000;
/**
 * How many fresh PINGs a late timeout may send in a row with nothing read since. A healthy connection's answer
 * is read in the same turn of the event loop as the late timer (timers run before I/O is polled), so a second
 * late timeout with still nothing read means the loop is late every time *and* the peer is silent: dead.
 */
export const MAX_LATE_PINGS = 2;

/** HTTP/2 connection health checks (see docs/transport.md, "HTTP/2"). */
export interface Http2Options {
  /**
   * After this long (ms) without a frame read on a connection that carries a
   * request, the client sends a PING. Default 5 s; `0` or `Infinity` sends none;
   * past Node's timer limit (2^31−1 ms, about 24.8 days) it is that limit.
   */
  readonly readIdleMs?: number;
  /**
   * A PING not answered within this long (ms) closes the connection, failing every request on it. Default 5 s;
   * `0` or `Infinity`: no timeout (a PING unanswered leaves the connection as it is); past Node's timer limit, that limit.
   */
  readonly pingTimeoutMs?: number;
  /**
   * A connection that carries no request for this long (ms) is closed, as client-go's transport closes an idle
   * one (`IdleConnTimeout`, 90 s). Default {@link DEFAULT_IDLE_CONNECTION_MS}; `0` or `Infinity`: kept until
   * the server closes it (an idle connection keeps no process alive either way).
   */
  readonly idleTimeoutMs?: number;
  /**
   * Most connections open at once to one server with one KubeConfig, user and TLS material (a pool slot). A
   * request that finds every one full (the server's `SETTINGS_MAX_CONCURRENT_STREAMS`) fails with a
   * `ProtocolError` (backed off and retried as any) instead of dialing another. Default {@link DEFAULT_MAX_CONNECTIONS}.
   */
  readonly maxConnections?: number;
  /**
   * Runs the PING timers, and its `now()` is their clock (tests pass a virtual-time scheduler). Default
   * `monotonicScheduler` (src/util/monotonicNow.ts): `asyncScheduler`'s timers, a monotonic clock, and rxjs's virtual
   * time inside `TestScheduler.run()`, as every other duration's.
   */
  readonly scheduler?: SchedulerLike;
}

/** What a PING timer sees when it fires (all times on one monotonic clock, ms). */
export interface PingTimerFired {
  /** `idle`: the read-idle timer; `timeout`: the timer of an unanswered PING. */
  readonly timer: 'idle' | 'timeout';
  /** When the timer fired. */
  readonly now: number;
  /** When it was due (armed at + delay). */
  readonly dueAt: number;
  /** When the last frame was read. */
  readonly lastRead: number;
  /** When the PING being timed was sent (`timeout` only). */
  readonly sentAt?: number;
  readonly readIdleMs: number;
  /** Lateness beyond which a timeout is blamed on the event loop, not the connection. */
  readonly lagMarginMs: number;
  /** Fresh PINGs already sent because a timeout fired late, with no frame read since (`timeout` only; default 0). */
  readonly latePings?: number;
}

/** What to do: arm the idle timer again for `delayMs`, send a (fresh) PING with a fresh timeout, or close. */
export type PingDecision =
  { readonly action: 'wait'; readonly delayMs: number } | { readonly action: 'ping'; readonly late?: true } | { readonly action: 'dead' };

/**
 * The PING rule as a pure function. The idle timer pings once nothing was read for `readIdleMs` (else waits the
 * rest). A PING timeout declares the connection dead only if it fired on time: a frame read since the PING was
 * sent, or a timer that fired more than `lagMarginMs` late (the event loop was blocked, and the answer may sit
 * unread in the socket), sends a fresh PING and waits a fresh timeout instead — at most {@link MAX_LATE_PINGS}
 * times in a row with nothing read, so a loop that is late every time still finds a dead connection.
 */
export function pingDecision(fired: PingTimerFired): PingDecision {
  if (fired.timer === 'idle') {
    const idle = fired.now - fired.lastRead;
    return idle < fired.readIdleMs ? { action: 'wait', delayMs: fired.readIdleMs - idle } : { action: 'ping' };
  }
  if (fired.sentAt !== undefined && fired.lastRead > fired.sentAt) return { action: 'ping' };
  if (fired.now - fired.dueAt > fired.lagMarginMs && (fired.latePings ?? 0) < MAX_LATE_PINGS) return { action: 'ping', late: true };
  return { action: 'dead' };
}

/**
 * The PING rule of one HTTP/2 connection, as client-go's `ReadIdleTimeout` and
 * `PingTimeout`: while the connection carries at least one request, a read
 * idle period without a frame read sends a PING; no answer within the ping
 * timeout declares the connection dead (`onDead`), unless the timeout fired
 * late or a frame came meanwhile ({@link pingDecision}). A connection that carries
 * no request has no timer (it costs nothing, and keeps no process alive); the
 * next request on it checks it at once if it has been quiet that long.
 */
export class PingHealth {
  private lastRead: number;
  private active = 0;
  private idleTimer: Subscription | undefined;
  private pingTimer: Subscription | undefined;
  private stopped = false;
  /** Fresh PINGs sent because a timeout fired late, since the last frame read. */
  private latePings = 0;
  private readonly scheduler: SchedulerLike;
  private readonly now: () => number;
  private readonly readIdleMs: number | undefined;
  /** Undefined: none. */
  private readonly pingTimeoutMs: number | undefined;

  private readonly session: ClientHttp2Session;
  private readonly onDead: (error: Error) => void;

  constructor(session: ClientHttp2Session, options: Http2Options, onDead: (error: Error) => void) {
    this.session = session;
    this.onDead = onDead;
    // One clock for timers and times: inside `TestScheduler.run()` the default's timers are virtual, so its clock must be.
    const scheduler = options.scheduler ?? monotonicScheduler;
    this.scheduler = scheduler;
    this.now = () => scheduler.now();
    // Through the one cap of user-supplied durations: a delay past Node's limit would fire every 1 ms.
    this.readIdleMs = timerMs(options.readIdleMs, DEFAULT_READ_IDLE_MS);
    this.pingTimeoutMs = timerMs(options.pingTimeoutMs, DEFAULT_PING_TIMEOUT_MS);
    this.lastRead = this.now();
  }

  /** A frame was read (a frame, a chunk, a PING answer). */
  read(): void {
    this.lastRead = this.now();
    this.latePings = 0;
  }

  /** When the last frame was read (on the health clock; for tests). */
  get lastReadAt(): number {
    return this.lastRead;
  }

  /** A request started (`+1`) or ended (`-1`) on the connection. */
  streams(delta: 1 | -1): void {
    this.active += delta;
    if (this.active === 1 && delta === 1)
      this.arm(this.readIdleMs === undefined ? undefined : Math.max(0, this.readIdleMs - (this.now() - this.lastRead)));
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

  private clear(): void {
    this.idleTimer?.unsubscribe();
    this.pingTimer?.unsubscribe();
    this.idleTimer = this.pingTimer = undefined;
  }

  private arm(delay: number | undefined): void {
    this.idleTimer?.unsubscribe();
    this.idleTimer = undefined;
    if (delay === undefined || this.stopped || this.active === 0) return;
    const dueAt = this.now() + delay;
    this.idleTimer = this.scheduler.schedule(() => {
      this.idleTimer = undefined;
      if (!this.pingTimer) this.decide(pingDecision(this.fired('idle', dueAt)));
    }, delay);
  }

  private fired(timer: 'idle' | 'timeout', dueAt: number, sentAt?: number): PingTimerFired {
    return {
      timer,
      now: this.now(),
      dueAt,
      lastRead: this.lastRead,
      sentAt,
      readIdleMs: this.readIdleMs!,
      lagMarginMs: PING_LAG_MARGIN_MS,
      latePings: this.latePings,
    };
  }

  private decide(decision: PingDecision): void {
    if (this.stopped) return;
    if (decision.action === 'wait') return this.arm(decision.delayMs);
    if (decision.action === 'ping') {
      if (decision.late) this.latePings++;
      return this.ping();
    }
    const error = new Error(
      `the HTTP/2 connection answered no PING within ${this.pingTimeoutMs ?? 0} ms (nothing read for ${Math.round(this.now() - this.lastRead)} ms)`,
    );
    (error as NodeJS.ErrnoException).code = 'ERR_HTTP2_PING_TIMEOUT';
    this.stop();
    this.onDead(error);
  }

  /** Sends a PING and arms its timeout (a fresh one, replacing any pending). */
  private ping(): void {
    this.pingTimer?.unsubscribe();
    this.pingTimer = undefined;
    const sentAt = this.now();
    const timeoutMs = this.pingTimeoutMs;
    if (timeoutMs !== undefined) {
      const dueAt = sentAt + timeoutMs;
      this.pingTimer = this.scheduler.schedule(() => {
        this.pingTimer = undefined;
        this.decide(pingDecision(this.fired('timeout', dueAt, sentAt)));
      }, timeoutMs);
    }
    try {
      this.session.ping((error) => {
        if (error || this.stopped) return;
        this.read();
        this.pingTimer?.unsubscribe();
        this.pingTimer = undefined;
        this.arm(this.readIdleMs);
      });
    } catch {
      // Too many PINGs outstanding or the session is closing: the timeout decides.
    }
  }
}
