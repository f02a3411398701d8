import { InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import { DEFAULT_LIST_IDLE_TIMEOUT_MS, DEFAULT_MIN_BODY_BYTES_PER_SECOND, formatBytes, type HttpTransportOptions } from './options.ts';
import { timerMs } from '../../util/scheduleAfter.ts';

// The progress rule of a body read to its end: a list page, an error Status, a document. Not a watch: a quiet watch
// is legitimate, and the reflector's deadlines (and HTTP/2 PINGs) bound it.

/**
 * Holds a body to a floor of progress: from its headers until it ends, every window of `windowMs` must bring at
 * least `minBytes`, else the body is abandoned as `Timeout`. The idle timer (no byte for `listIdleTimeoutMs`)
 * alone let a server keep a body going forever with one byte a window; under this rule a body takes at most
 * about `windowMs` for every `minBytes` its byte limit allows (see docs/transport.md, "Time bounds").
 */
export class BodyProgress {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly windowMs: number;
  private readonly minBytes: number;
  private readonly what: string;
  private readonly phase: ErrorPhase;

  constructor(windowMs: number, minBytes: number, what: string, phase: ErrorPhase) {
    this.windowMs = windowMs;
    this.minBytes = minBytes;
    this.what = what;
    this.phase = phase;
  }

  /** Starts the windows (the headers have come): `read` tells the bytes read so far, `slow` hears of a window short of the floor. */
  start(read: () => number, slow: (error: InformerError) => void): void {
    this.stop();
    let from = read();
    const check = () => {
      const got = read() - from;
      if (got < this.minBytes) {
        this.timer = undefined;
        const message =
          `${this.what}: ${got} bytes in ${this.windowMs} ms, under the floor of ${formatBytes(this.minBytes)} a window; ` +
          'aborted (options minBodyBytesPerSecond, listIdleTimeoutMs)';
        return slow(new InformerError('Timeout', message, { phase: this.phase }));
      }
      from += got;
      this.timer = setTimeout(check, this.windowMs);
    };
    this.timer = setTimeout(check, this.windowMs);
  }

  /** The body ended, failed or is no longer wanted: no more windows. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * The progress rule of the transport's options for a body named `what`: windows of `listIdleTimeoutMs`, each
 * bringing `minBodyBytesPerSecond` for each of its seconds (at least 1 byte); undefined when either is off (0, or an
 * infinite rate).
 */
export function bodyProgress(options: HttpTransportOptions, what: string, phase: ErrorPhase): BodyProgress | undefined {
  const windowMs = timerMs(options.listIdleTimeoutMs, DEFAULT_LIST_IDLE_TIMEOUT_MS);
  const rate = options.minBodyBytesPerSecond ?? DEFAULT_MIN_BODY_BYTES_PER_SECOND;
  // 0 or Infinity turns it off, as for the other bounds (transport.md): an infinite floor would fail every body.
  if (windowMs === undefined || !(rate > 0) || !Number.isFinite(rate)) return undefined;
  return new BodyProgress(windowMs, Math.max(1, Math.floor((rate * windowMs) / 1000)), what, phase);
}
