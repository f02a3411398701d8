import { Backoff } from '../2-source/backoff.ts';

export interface WebhookOptions {
  /** Attempts per event before it is given up (and reported). Default 5. */
  readonly attempts?: number;
  /** Events waiting at most; beyond that the oldest are dropped (and reported). Default 10 000. */
  readonly maxQueue?: number;
  /** Per-request timeout (ms). Default 10 000. */
  readonly timeoutMs?: number;
  /** Told about every failed delivery and every drop. */
  readonly onFailure: (message: string) => void;
  /** Backoff between attempts. Default 500 ms doubling to 10 s. */
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number };
}

/**
 * POSTs events as JSON to a URL, one at a time, in order, with retries and
 * backoff. `send` never blocks the caller: events wait in a bounded queue,
 * and whatever cannot be delivered is reported, never silently lost.
 */
export class WebhookSender {
  private readonly url: string;
  private readonly options: WebhookOptions;
  private readonly queue: unknown[] = [];
  private running = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  delivered = 0;
  failed = 0;
  dropped = 0;

  constructor(url: string, options: WebhookOptions) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError(`--webhook needs an http(s) URL, got ${url}`);
    this.url = parsed.toString();
    this.options = options;
  }

  send(event: unknown): void {
    if (this.closed) return;
    if (this.queue.length >= (this.options.maxQueue ?? 10_000)) {
      this.queue.shift();
      this.dropped++;
      this.options.onFailure(`webhook queue full: dropped the oldest event (${this.dropped} dropped so far)`);
    }
    this.queue.push(event);
    if (!this.running) void this.run();
  }

  /** Waits until the queue is empty (or `timeoutMs` passes), then stops. */
  async close(timeoutMs = 2000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while ((this.running || this.queue.length > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    this.closed = true;
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const event = this.queue[0];
        const ok = await this.deliver(event);
        this.queue.shift();
        if (ok) this.delivered++;
        else this.failed++;
      }
    } finally {
      this.running = false;
    }
  }

  private async deliver(event: unknown): Promise<boolean> {
    const attempts = this.options.attempts ?? 5;
    const backoff = new Backoff({ initialMs: this.options.backoff?.initialMs ?? 500, maxMs: this.options.backoff?.maxMs ?? 10_000, jitter: 0.2 });
    const body = JSON.stringify(event);
    for (let attempt = 1; attempt <= attempts && !this.closed; attempt++) {
      let problem: string;
      try {
        const response = await fetch(this.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body,
          signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.timeoutMs ?? 10_000)]),
        });
        await response.arrayBuffer().catch(() => undefined);
        if (response.ok) return true;
        problem = `HTTP ${response.status}`;
      } catch (error) {
        if (this.closed) return false;
        problem = error instanceof Error ? `${error.name}: ${(error.cause as Error | undefined)?.message ?? error.message}` : String(error);
      }
      const last = attempt === attempts;
      this.options.onFailure(`webhook ${this.url}: attempt ${attempt}/${attempts} failed (${problem})${last ? '; event given up' : ''}`);
      if (!last) await new Promise<void>((resolve) => (this.timer = setTimeout(resolve, backoff.next(Date.now()))));
    }
    return false;
  }
}
