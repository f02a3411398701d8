/**
 * Probes for the resilience suite: how many requests an informer has in flight
 * (logically, at the ListWatch boundary, and physically, as the server sees
 * the connections), plus small timing helpers.
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Observable } from 'rxjs';
import type { ListWatch } from '../../../src/index.ts';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every few ms until it holds; false when `timeoutMs` passed first. */
export async function until(check: () => boolean, timeoutMs: number, everyMs = 5): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/**
 * Wraps a ListWatch and counts the list/watch subscriptions alive at once: the
 * reflector promises at most one. Exact: a request counts from subscribe to
 * its teardown (completion, error or unsubscribe).
 */
export class InflightProbe {
  current = 0;
  max = 0;
  total = 0;
  /** Descriptions of the moments two requests were alive together. */
  readonly overlaps: string[] = [];
  private active = new Set<string>();

  wrap(inner: ListWatch): ListWatch {
    return {
      list: (options) => this.track(`list ${JSON.stringify(options)}`, () => inner.list(options)),
      watch: (options) => this.track(`watch ${JSON.stringify(options)}`, () => inner.watch(options)),
    };
  }

  private track<T>(what: string, open: () => Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      const id = `#${++this.total} ${what}`;
      if (this.active.size > 0) this.overlaps.push(`${id} started while ${[...this.active].join(', ')} was in flight`);
      this.active.add(id);
      this.current = this.active.size;
      this.max = Math.max(this.max, this.current);
      const subscription = open().subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        this.active.delete(id);
        this.current = this.active.size;
      };
    });
  }
}

/** One HTTP request as the server saw it: arrival and close of its response (ms, performance.now()). */
export interface SeenRequest {
  readonly url: string;
  readonly userAgent: string;
  readonly startAt: number;
  closeAt: number | undefined;
}

interface RequestStart {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly socket: Socket;
}

/**
 * Every request a server on `port` receives, with the moment its response
 * closed, through Node's `http.server.request.start` diagnostics channel (no
 * change to the server needed). Call `stop()` when done.
 */
export class ServerRequestTracker {
  readonly requests: SeenRequest[] = [];
  private readonly listener: (message: unknown) => void;

  constructor(port: number) {
    this.listener = (message) => {
      const { request, response, socket } = message as RequestStart;
      if (socket.localPort !== port) return;
      const seen: SeenRequest = {
        url: request.url ?? '',
        userAgent: String(request.headers['user-agent'] ?? ''),
        startAt: performance.now(),
        closeAt: undefined,
      };
      this.requests.push(seen);
      response.once('close', () => (seen.closeAt = performance.now()));
    };
    dc.subscribe('http.server.request.start', this.listener);
  }

  of(userAgent: string): SeenRequest[] {
    return this.requests.filter((r) => r.userAgent === userAgent);
  }

  /** Requests of `userAgent` still open. */
  open(userAgent: string): SeenRequest[] {
    return this.of(userAgent).filter((r) => r.closeAt === undefined);
  }

  /**
   * Pairs of requests of `userAgent` the server had open at the same time for
   * more than `graceMs` (the close of an aborted request and the arrival of
   * the next one travel on different sockets, so their order at the server is
   * not exact; a leaked request stays open far longer).
   */
  overlaps(userAgent: string, graceMs: number): string[] {
    const mine = this.of(userAgent).sort((a, b) => a.startAt - b.startAt);
    const out: string[] = [];
    const now = performance.now();
    for (let i = 1; i < mine.length; i++) {
      const next = mine[i]!;
      for (let j = 0; j < i; j++) {
        const earlier = mine[j]!;
        const overlap = (earlier.closeAt ?? now) - next.startAt;
        if (overlap > graceMs) out.push(`${earlier.url} was still open ${Math.round(overlap)} ms after ${next.url} arrived`);
      }
    }
    return out;
  }

  stop(): void {
    dc.unsubscribe('http.server.request.start', this.listener);
  }
}

export { seededRandom } from '../../../src/util/seededRandom.ts';
