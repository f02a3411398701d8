import { Backoff } from '../pipeline.ts';
import { parseRetryAfter } from '../0-model/retryAfter.ts';
import { monotonicNow } from '../util/monotonicNow.ts';
import { capDelay, timerMs } from '../util/scheduleAfter.ts';
import { count, messageOf } from './format.ts';
import {
  httpSinkStep,
  initialHttpSink,
  queuedItems,
  sinkCounts,
  type HttpSinkConfig,
  type HttpSinkEffect,
  type HttpSinkInput,
  type HttpSinkState,
  type SinkOutcome,
} from './httpSinkStep.ts';
import type { SinkTarget } from './sinkUrl.ts';

export interface HttpSinkOptions {
  /** `webhook` or `slack`: names the sink in messages, with the target's origin. */
  readonly kind: string;
  /** What messages call the sink, when `kind` and origin are not enough (two sinks to one origin: `webhook #2 https://host`). */
  readonly label?: string;
  readonly target: SinkTarget;
  /** Items per POST. */
  readonly maxBatch: number;
  /** The request body for a batch of items (each already text). */
  readonly encode: (items: readonly string[]) => string;
  /** Where problems and summaries go (one line each). */
  readonly report: (line: string) => void;
  /** Bytes of items waiting (and in flight) at most; beyond that the oldest are dropped. Default 16 MiB. */
  readonly maxQueueBytes?: number;
  /** After the first problem is reported at once, further ones are summed up once per interval. Default 10 s. */
  readonly reportIntervalMs?: number;
  /**
   * Per-request timeout (ms). Default 10 s; `0` or `Infinity`: none; past Node's timer limit (2^31−1 ms, about
   * 24.8 days) it is that limit (the one cap, `timerMs` in src/util/scheduleAfter.ts).
   */
  readonly timeoutMs?: number;
  /** Between failed attempts. Default 500 ms doubling to 30 s; a wait past Node's timer limit is that limit. */
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number };
}

/** What a sink did over its life. `dropped` and `rejected` plus `unsent` are everything not delivered. */
export interface SinkSummary {
  readonly delivered: number;
  /** Dropped because the queue was full (oldest first). */
  readonly dropped: number;
  /** Refused by the receiver for good (a 4xx other than 408/429, or a redirect). */
  readonly rejected: number;
  /** Still queued or in flight when the flush ran out of time. */
  readonly unsent: number;
}

/**
 * POSTs items in order, a batch at a time, never blocking the caller. A
 * receiver that fails (5xx, 408, 429, network) is retried with backoff for
 * as long as it takes, the queue bounded by bytes so memory is too; one that
 * refuses (other 4xx) or redirects loses that batch and the next goes on.
 * Redirects are never followed: the body is the user's data, and a receiver
 * should not be able to send it elsewhere. Only the URL's origin is printed.
 * An item counts as delivered when the receiver answers 2xx: the response's
 * status is read, its body never (nothing in it is used).
 *
 * The rules are ./httpSinkStep.ts's pure step; this shell carries out its effects: the POST, the timers (the wait
 * after a failure, the report interval, the close's deadline), the report lines.
 */
export class HttpSink {
  readonly label: string;
  private readonly options: HttpSinkOptions;
  private readonly config: HttpSinkConfig;
  private state: HttpSinkState = initialHttpSink();
  private readonly abort = new AbortController();
  private readonly reporter: NodeJS.Timeout;
  private readonly backoff: Backoff;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly ended: Promise<void>;
  private end: () => void = () => undefined;

  constructor(options: HttpSinkOptions) {
    this.options = options;
    this.label = options.label ?? `${options.kind} ${options.target.origin}`;
    const reportIntervalMs = options.reportIntervalMs ?? 10_000;
    this.config = {
      label: this.label,
      maxBatch: options.maxBatch,
      maxQueueBytes: options.maxQueueBytes ?? 16 * 1024 * 1024,
      reportIntervalMs,
    };
    this.backoff = new Backoff({ initialMs: options.backoff?.initialMs ?? 500, maxMs: options.backoff?.maxMs ?? 30_000, jitter: 0.2 });
    this.ended = new Promise<void>((resolve) => (this.end = resolve));
    this.reporter = setInterval(() => this.dispatch({ type: 'tick' }), reportIntervalMs);
    this.reporter.unref();
  }

  get queued(): number {
    return queuedItems(this.state);
  }

  /** Queues one item; the oldest waiting ones are dropped (and counted) when the byte bound is passed. */
  send(text: string): void {
    this.dispatch({ type: 'send', item: { text, bytes: Buffer.byteLength(text) } });
  }

  /**
   * Stops taking items and gives the queue until `deadline` (ms since the
   * epoch) to drain, then aborts what is in flight. Never rejects.
   */
  async close(deadline: number): Promise<SinkSummary> {
    this.dispatch({ type: 'close', deadline });
    await this.ended;
    return this.summary();
  }

  /** What it did so far; what is queued or in flight counts as unsent (a second Ctrl-C exits before the flush ends). */
  summary(): SinkSummary {
    return sinkCounts(this.state);
  }

  /** `webhook http://host: 3 events delivered, 2 not (1 dropped as the queue was full, 1 unsent at exit)`. */
  static describe(label: string, s: SinkSummary): string {
    const lost = s.dropped + s.rejected + s.unsent;
    const why = [
      s.dropped ? `${s.dropped} dropped as the queue was full` : '',
      s.rejected ? `${s.rejected} refused by the receiver` : '',
      s.unsent ? `${s.unsent} unsent at exit` : '',
    ].filter(Boolean);
    return `${label}: ${count(s.delivered, 'event')} delivered${lost ? `, ${lost} not (${why.join(', ')})` : ''}`;
  }

  /** One input through the step, then its effects, in order. */
  private dispatch(input: HttpSinkInput): void {
    const { state, effects } = httpSinkStep(this.config, this.state, input, monotonicNow());
    this.state = state;
    for (const effect of effects) this.carryOut(effect);
  }

  private carryOut(effect: HttpSinkEffect): void {
    switch (effect.type) {
      case 'post':
        return void this.post(effect.items).then((outcome) => this.dispatch({ type: 'posted', outcome }));
      case 'wait':
        // The one cap: a wait past Node's timer limit would fire after 1 ms, a retry every millisecond.
        return this.after(capDelay(effect.retryAfterMs ?? this.backoff.next(monotonicNow())), { type: 'waited' });
      case 'resetBackoff':
        return this.backoff.reset();
      case 'report':
        return this.options.report(effect.line);
      case 'armCut':
        return this.after(capDelay(Math.max(0, effect.deadline - Date.now())), { type: 'cut' });
      case 'abort':
        for (const timer of this.timers) clearTimeout(timer);
        this.timers.clear();
        return this.abort.abort();
      case 'closed':
        clearInterval(this.reporter);
        return this.end();
    }
  }

  /** Inputs `input` after `ms`, unless aborted first. */
  private after(ms: number, input: HttpSinkInput): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.dispatch(input);
    }, ms);
    this.timers.add(timer);
  }

  /** The POST of a batch: its outcome, never a rejection (an encoder that throws loses the batch, as a refusal does). */
  private async post(items: readonly string[]): Promise<SinkOutcome> {
    let body: string;
    try {
      body = this.options.encode(items);
    } catch (error) {
      return { ok: false, permanent: true, problem: `cannot encode the batch: ${messageOf(error)}` };
    }
    const { target } = this.options;
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers },
        body,
        redirect: 'manual',
        signal: this.requestSignal(),
      });
      // The status is the answer; the body is never read (not ours to print, and it may never end): cancelled at once,
      // so a receiver cannot grow our memory or hold up the next delivery. A body that was complete keeps its connection.
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return { ok: true };
      if (response.status >= 300 && response.status < 400)
        return { ok: false, permanent: true, problem: `HTTP ${response.status} redirect refused (not followed)` };
      const retryAfterMs = sinkRetryAfterMs(response.status, response.headers.get('retry-after'));
      const transient = response.status >= 500 || response.status === 408 || response.status === 429;
      return {
        ok: false,
        permanent: !transient,
        problem: `HTTP ${response.status}`,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
      return { ok: false, permanent: false, problem: this.scrub(messageOf(cause)) };
    }
  }

  /** Aborts a request when the sink closes or its `timeoutMs` (through the one cap) runs out. */
  private requestSignal(): AbortSignal {
    const timeoutMs = timerMs(this.options.timeoutMs, DEFAULT_SINK_TIMEOUT_MS);
    return timeoutMs === undefined ? this.abort.signal : AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]);
  }

  /** Error texts may quote the URL: only its origin may be shown. */
  private scrub(text: string): string {
    const { url, origin } = this.options.target;
    return text.split(url).join(origin);
  }
}

/** The default of {@link HttpSinkOptions.timeoutMs}. */
export const DEFAULT_SINK_TIMEOUT_MS = 10_000;

/** The longest wait a receiver's `Retry-After` buys (s): a webhook is not worth a queue standing still for longer. */
export const MAX_SINK_RETRY_AFTER_SECONDS = 60;

/**
 * The wait (ms) a receiver's answer asks for before the batch is sent again: its `Retry-After` (seconds or an HTTP
 * date, read by the one parser, `parseRetryAfter`) on a 429 or 503, at most {@link MAX_SINK_RETRY_AFTER_SECONDS};
 * undefined (the backoff decides) for any other status, and for a missing, unreadable or zero wait.
 */
export function sinkRetryAfterMs(status: number, header: string | null, now: number = Date.now()): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const seconds = parseRetryAfter(header, { now, maxSeconds: MAX_SINK_RETRY_AFTER_SECONDS });
  return seconds === undefined || seconds <= 0 ? undefined : seconds * 1000;
}
