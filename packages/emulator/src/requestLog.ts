/**
 * The request log: every request, in the order its response started, with the
 * status sent and any fault applied.
 */
import type { FaultType } from './faults.ts';

export interface RequestRecord {
  /** 1, 2, 3… in log order. */
  readonly seq: number;
  /** ms since the server started. */
  readonly at: number;
  readonly method: string;
  /** URL path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly watch: boolean;
  readonly group?: string;
  readonly version?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  /** HTTP status sent; 0 when the connection was reset without a response. */
  readonly status: number;
  /** The fault applied, if any (for a watch: the latest, a live fault included). */
  fault?: FaultType;
  faultId?: number;
  /** Watches: ms since the server started (as `at`) when the watch fault took effect; unset while its trigger waits. */
  faultFiredAt?: number;
  readonly userAgent?: string;
  /** The request's `Accept-Encoding` header, as sent (unset when there was none). */
  readonly acceptEncoding?: string;
  /** The request's `Accept` header, when it sent one. */
  readonly accept?: string;
  /** The response's `Content-Type` (what the server answered in: JSON, protobuf, a protobuf watch), once its headers are written. */
  contentType?: string;
  /** Watches: ADDED/MODIFIED/DELETED lines written so far. */
  eventsSent?: number;
  /** Watches: BOOKMARK lines written so far. */
  bookmarksSent?: number;
  /**
   * Watches, and responses under a `pauseBody` fault (`client`: the client closed it before its end; `fault`: the
   * fault reset it): how the response ended (`undefined` while open or, for a response, once written whole). `expired`: the one ERROR line of a 410;
   * `error`: the one ERROR line of another Status (a streaming list at a resourceVersion not reached: 504).
   */
  ended?: 'timeout' | 'client' | 'fault' | 'expired' | 'error' | 'server-close';
}

export type RequestPredicate = (r: RequestRecord) => boolean;

interface Waiter {
  pred: RequestPredicate;
  resolve: (r: RequestRecord) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class RequestLog {
  private readonly records: RequestRecord[] = [];
  private readonly waiters = new Set<Waiter>();
  private seq = 0;
  private readonly start = performance.now();

  get entries(): readonly RequestRecord[] {
    return this.records;
  }

  now(): number {
    return Math.round((performance.now() - this.start) * 10) / 10;
  }

  add(r: Omit<RequestRecord, 'seq' | 'at'>): RequestRecord {
    const rec: RequestRecord = { seq: ++this.seq, at: this.now(), ...r };
    this.records.push(rec);
    for (const w of [...this.waiters]) {
      if (w.pred(rec)) {
        this.waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve(rec);
      }
    }
    return rec;
  }

  clear(): void {
    this.records.length = 0;
  }

  /** The first logged request (past or future) matching `pred`. */
  wait(pred: RequestPredicate, timeoutMs: number, includePast: boolean): Promise<RequestRecord> {
    if (includePast) {
      const hit = this.records.find(pred);
      if (hit) return Promise.resolve(hit);
    }
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        pred,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(w);
          reject(new Error(`no matching request within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.waiters.add(w);
    });
  }

  /** Rejects every pending wait (server closing). */
  cancelWaits(reason: string): void {
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(reason));
    }
    this.waiters.clear();
  }
}
