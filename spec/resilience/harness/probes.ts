/**
 * Probes for the resilience suite: how many requests an informer has in flight
 * (logically, at the ListWatch boundary, and physically, as the server sees
 * the connections), plus small timing helpers.
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Observable } from 'rxjs';
import type { ListWatch } from '../../../src/pipeline.ts';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every `everyMs` until it holds; false when the budget ran out first. The budget is
 * counted in polls (`timeoutMs / everyMs` of them) as well as in wall time, and both must run out: on a
 * loaded machine each poll comes late and the wait stretches with the event loop's delay, so a slow
 * machine never looks like a stuck informer. `onPoll` runs before each check (the harness moves its clock there).
 */
export async function until(check: () => boolean, timeoutMs: number, everyMs = 5, onPoll?: () => void): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  let polls = Math.ceil(timeoutMs / everyMs);
  for (;;) {
    onPoll?.();
    if (check()) return true;
    if (polls-- <= 0 && performance.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/** One list or watch as the informer saw it, at the ListWatch boundary, on the informer's clock. */
export interface ClientRequest {
  readonly watch: boolean;
  readonly options: Readonly<Record<string, unknown>>;
  readonly startedAt: number;
  endedAt: number | undefined;
  /** How it ended for the informer: completed, failed, or left (unsubscribed) by the informer first. */
  end: 'complete' | 'error' | 'unsubscribed' | undefined;
  /** ADDED, MODIFIED and DELETED frames delivered. */
  events: number;
}

/**
 * Wraps a ListWatch and counts the list/watch subscriptions alive at once: the
 * reflector promises at most one. Exact: a request counts from subscribe to
 * its teardown (completion, error or unsubscribe). It also records each
 * request as the informer saw it (see {@link ClientRequest}), timed with `now`
 * (the informer's clock).
 */
export class InflightProbe {
  current = 0;
  max = 0;
  total = 0;
  /** Descriptions of the moments two requests were alive together. */
  readonly overlaps: string[] = [];
  readonly requests: ClientRequest[] = [];
  private active = new Set<string>();
  private readonly now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.now = now;
  }

  wrap(inner: ListWatch): ListWatch {
    return {
      list: (options) => this.track(false, options, () => inner.list(options)),
      watch: (options) => this.track(true, options, () => inner.watch(options)),
    };
  }

  private track<T>(watch: boolean, options: object, open: () => Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      const id = `#${++this.total} ${watch ? 'watch' : 'list'} ${JSON.stringify(options)}`;
      if (this.active.size > 0) this.overlaps.push(`${id} started while ${[...this.active].join(', ')} was in flight`);
      this.active.add(id);
      this.current = this.active.size;
      this.max = Math.max(this.max, this.current);
      const record: ClientRequest = {
        watch,
        options: { ...options },
        startedAt: this.now(),
        endedAt: undefined,
        end: undefined,
        events: 0,
      };
      this.requests.push(record);
      const ended = (end: NonNullable<ClientRequest['end']>) => {
        if (record.end) return;
        record.end = end;
        record.endedAt = this.now();
      };
      const subscription = open().subscribe({
        next: (value) => {
          if (watch && isChange(value)) record.events++;
          subscriber.next(value);
        },
        error: (error: unknown) => {
          ended('error');
          subscriber.error(error);
        },
        complete: () => {
          ended('complete');
          subscriber.complete();
        },
      });
      return () => {
        ended('unsubscribed');
        subscription.unsubscribe();
        this.active.delete(id);
        this.current = this.active.size;
      };
    });
  }
}

function isChange(frame: unknown): boolean {
  const type = frame !== null && typeof frame === 'object' && !(frame instanceof Error) ? (frame as { type?: unknown }).type : undefined;
  return type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED';
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
   * Requests of `userAgent` the server still had open when two later ones of the same client had
   * arrived. The close of a request the client aborted and the arrival of the next one travel on
   * different sockets, so the server may see them in either order (by any margin, on a loaded
   * machine); but the request after the next one is sent only once the next one was answered, so the
   * server has seen the abort by then. A leaked request stays open across many.
   */
  overlaps(userAgent: string): string[] {
    const mine = this.of(userAgent).sort((a, b) => a.startAt - b.startAt);
    const out: string[] = [];
    for (let i = 0; i < mine.length; i++) {
      const earlier = mine[i]!;
      const during = mine.slice(i + 1).filter((r) => earlier.closeAt === undefined || r.startAt < earlier.closeAt);
      if (during.length >= 2)
        out.push(`${earlier.url} was still open when ${during.length} later requests had arrived (${during[1]!.url} …)`);
    }
    return out;
  }

  stop(): void {
    dc.unsubscribe('http.server.request.start', this.listener);
  }
}

export { seededRandom } from '../../../src/util/seededRandom.ts';
