/**
 * Watch streams: chunked NDJSON, one event per line, with replay from history,
 * synthetic initial ADDED events, bookmarks, timeouts, selector transitions,
 * and the watch faults.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WatchFault } from './faults.ts';
import type { RequestRecord } from './request-log.ts';
import type { ResourceDef } from './resources.ts';
import { type FieldSelector, type LabelSelector, matchesFields, matchesLabels } from './selectors.ts';
import { type Status, watchTooOld } from './status.ts';
import { type Collection, eventLine, type HistoryEvent, objectJson } from './store.ts';
import type { KubeObject } from './types.ts';

export interface WatchFilter {
  namespace: string | undefined;
  labels: LabelSelector;
  fields: FieldSelector;
}

/** Field values of an object for field selectors. */
export function fieldValues(def: ResourceDef, obj: KubeObject): Record<string, string> {
  const meta = obj.metadata ?? {};
  const out: Record<string, string> = {
    'metadata.name': meta.name ?? '',
    'metadata.namespace': def.namespaced ? (meta.namespace ?? '') : '',
  };
  for (const [k, get] of Object.entries(def.fields)) out[k] = get(obj) ?? '';
  return out;
}

export function matchesFilter(def: ResourceDef, f: WatchFilter, obj: KubeObject): boolean {
  if (f.namespace !== undefined && obj.metadata?.namespace !== f.namespace) return false;
  if (f.labels.length && !matchesLabels(f.labels, obj.metadata?.labels)) return false;
  if (f.fields.length && !matchesFields(f.fields, fieldValues(def, obj))) return false;
  return true;
}

export function bookmarkLine(def: ResourceDef, rv: number, initialEventsEnd = false): string {
  const annotations = initialEventsEnd ? { 'k8s.io/initial-events-end': 'true' } : undefined;
  const object = def.builtin
    ? {
        kind: def.kind,
        apiVersion: def.apiVersion,
        metadata: { resourceVersion: String(rv), creationTimestamp: null, ...(annotations ? { annotations } : {}) },
      }
    : {
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: { ...(annotations ? { annotations } : {}), resourceVersion: String(rv) },
      };
  return `${JSON.stringify({ type: 'BOOKMARK', object })}\n`;
}

export function errorLine(status: Status): string {
  return `${JSON.stringify({ type: 'ERROR', object: status })}\n`;
}

export interface WatchOptions {
  def: ResourceDef;
  coll: Collection;
  filter: WatchFilter;
  /** Revision the watch starts after (replay) or the revision of the initial state. */
  startRv: number;
  /** Lines written before live events (replayed history or synthetic ADDED). */
  backlog: HistoryEvent[] | KubeObject[];
  backlogKind: 'history' | 'initial';
  /** Send the initial-events-end BOOKMARK after the backlog (sendInitialEvents). */
  initialEventsEndRv?: number;
  bookmarkIntervalMs?: number;
  timeoutMs?: number;
  fault?: WatchFault;
  record: RequestRecord;
  /** The oldest revision the history still covers (for expireWatch messages). */
  floor: () => number;
  onEnd: (session: WatchSession) => void;
  /** Sessions that ended but still trickle out a slowWatch backlog (disposed by the server's close). */
  draining: Set<WatchSession>;
}

/** One open watch response. */
export class WatchSession {
  private readonly res: ServerResponse;
  private readonly req: IncomingMessage;
  private readonly o: WatchOptions;
  private pending: string[] = [];
  private flushScheduled = false;
  private ended = false;
  private stalled = false;
  private progressRv: number;
  private events = 0;
  private faultFired = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listener = (ev: HistoryEvent): void => this.onEvent(ev);
  // slowWatch
  private slowQueue: Buffer[] = [];
  private slowTimer: NodeJS.Timeout | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, o: WatchOptions) {
    this.req = req;
    this.res = res;
    this.o = o;
    this.progressRv = o.startRv;
  }

  /** Sends headers, backlog, and subscribes to live events. Call synchronously after computing the backlog. */
  start(): void {
    const { o } = this;
    this.res.on('close', () => this.finish('client'));
    this.req.on('error', () => this.finish('client'));
    o.coll.listeners.add(this.listener);
    this.res.writeHead(200, { 'Cache-Control': 'no-cache, private', 'Content-Type': 'application/json' });
    this.res.flushHeaders();
    o.record.eventsSent = 0;
    o.record.bookmarksSent = 0;

    const f = o.fault;
    if (f && f.type !== 'slowWatch' && f.afterMs !== undefined) {
      this.timer(() => this.fire(), f.afterMs);
    }
    if (f && f.type !== 'slowWatch' && f.afterEvents === undefined && f.afterMs === undefined) this.fire();
    else if (f && f.type !== 'slowWatch' && f.afterEvents === 0) this.fire();

    if (o.backlogKind === 'history') {
      for (const ev of o.backlog as HistoryEvent[]) this.onEvent(ev);
    } else {
      for (const obj of o.backlog as KubeObject[]) this.sendEvent(eventLine('ADDED', obj));
    }
    if (o.initialEventsEndRv !== undefined && !this.ended) {
      this.progressRv = Math.max(this.progressRv, o.initialEventsEndRv);
      this.sendBookmark(bookmarkLine(o.def, o.initialEventsEndRv, true));
    }
    if (this.ended || this.stalled) return;
    if (o.timeoutMs !== undefined) this.timer(() => this.end('timeout'), o.timeoutMs);
    if (o.bookmarkIntervalMs !== undefined && o.bookmarkIntervalMs > 0) {
      const t = setInterval(() => {
        // Like kube-apiserver: a bookmark only once the resource changed after the watch's start (03c, 03d).
        if (this.progressRv > o.startRv) this.sendBookmark(bookmarkLine(o.def, this.progressRv));
      }, o.bookmarkIntervalMs);
      this.timers.add(t);
    }
  }

  get def(): ResourceDef {
    return this.o.def;
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  private timer(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private onEvent(ev: HistoryEvent): void {
    if (this.ended) return;
    // A watch from a future revision waits for it.
    if (ev.rv <= this.o.startRv) return;
    this.progressRv = Math.max(this.progressRv, ev.rv);
    const { def, filter } = this.o;
    const trivial = filter.namespace === undefined && !filter.labels.length && !filter.fields.length;
    if (trivial) {
      this.sendEvent(ev.toLine());
      return;
    }
    const cur = ev.type !== 'DELETED' && matchesFilter(def, filter, ev.object);
    const prev = ev.type === 'ADDED' ? false : matchesFilter(def, filter, ev.type === 'DELETED' ? ev.object : ev.prev!);
    if (ev.type === 'DELETED') {
      if (prev) this.sendEvent(ev.toLine());
    } else if (cur && prev) this.sendEvent(ev.toLine());
    else if (cur) this.sendEvent(eventLine('ADDED', ev.object));
    else if (prev) {
      // The object stopped matching: DELETED with its previous state at the event's revision.
      const old = ev.prev!;
      const obj = { ...old, metadata: { ...old.metadata, resourceVersion: String(ev.rv) } };
      this.sendEvent(`{"type":"DELETED","object":${objectJson(obj)}}\n`);
    }
  }

  private sendEvent(line: string): void {
    if (this.ended || this.stalled) return;
    this.write(line);
    this.events++;
    this.o.record.eventsSent = this.events;
    const f = this.o.fault;
    if (f && f.type !== 'slowWatch' && !this.faultFired && f.afterEvents !== undefined && this.events >= f.afterEvents) {
      this.fire();
    }
  }

  private sendBookmark(line: string): void {
    if (this.ended || this.stalled) return;
    this.write(line);
    this.o.record.bookmarksSent = (this.o.record.bookmarksSent ?? 0) + 1;
  }

  /** Applies the watch fault (once). */
  private fire(): void {
    const f = this.o.fault;
    if (!f || this.faultFired || this.ended) return;
    this.faultFired = true;
    switch (f.type) {
      case 'dropWatch':
        this.drop();
        break;
      case 'stallWatch':
        this.stalled = true;
        this.flush();
        for (const t of this.timers) {
          clearTimeout(t);
          clearInterval(t);
        }
        this.timers.clear();
        this.o.coll.listeners.delete(this.listener);
        break;
      case 'malformedLine':
        this.write(`${f.line ?? '{"type":"MODIFIED","object":{"kind":"'}\n`);
        break;
      case 'oversizeLine': {
        const size = f.bytes ?? 3 * 1024 * 1024;
        const head = bookmarkLine(this.o.def, this.progressRv);
        const pad = 'x'.repeat(Math.max(0, size - head.length - 64));
        const obj = JSON.parse(head) as { object: { metadata: Record<string, unknown> } };
        obj.object.metadata['annotations'] = { 'emulator.rx-informer.dev/padding': pad };
        this.write(`${JSON.stringify(obj)}\n`);
        break;
      }
      case 'closeWatch':
        this.end('fault');
        break;
      case 'expireWatch':
        this.write(errorLine(watchTooOld(this.o.startRv, this.o.floor())));
        this.end('fault');
        break;
    }
  }

  private write(line: string): void {
    this.pending.push(line);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0 || this.res.destroyed || this.res.writableEnded) {
      this.pending = [];
      return;
    }
    const data = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    if (this.o.fault?.type === 'slowWatch') this.slowWrite(Buffer.from(data));
    else this.res.write(data);
  }

  private slowWrite(buf: Buffer): void {
    const f = this.o.fault as { chunkBytes?: number; delayMs?: number };
    const size = Math.max(1, f.chunkBytes ?? 64);
    for (let i = 0; i < buf.length; i += size) this.slowQueue.push(buf.subarray(i, i + size));
    this.pumpSlow(f.delayMs ?? 5);
  }

  private pumpSlow(delay: number): void {
    if (this.slowTimer) return;
    const step = (): void => {
      this.slowTimer = undefined;
      const chunk = this.slowQueue.shift();
      if (chunk && !this.res.destroyed) this.res.write(chunk);
      if (this.slowQueue.length) this.slowTimer = setTimeout(step, delay);
      else this.slowDone?.();
    };
    this.slowTimer = setTimeout(step, delay);
  }
  private slowDone: (() => void) | undefined;

  /** Flushes what was written, then closes the connection without the terminating chunk. */
  private drop(): void {
    this.cleanup('fault');
    this.dispose();
    const sock = this.res.socket;
    this.flushNow();
    if (sock) sock.destroySoon();
    else this.res.destroy();
  }

  /** Ends the response cleanly with its terminating chunk. */
  end(how: NonNullable<RequestRecord['ended']>): void {
    if (this.ended) return;
    this.cleanup(how);
    const finish = (): void => {
      if (!this.res.destroyed) this.res.end();
    };
    if (this.o.fault?.type === 'slowWatch') {
      const data = this.pending.join('');
      this.pending = [];
      if (data) this.slowWrite(Buffer.from(data));
      if (this.slowQueue.length && how !== 'server-close') {
        this.o.draining.add(this);
        this.slowDone = () => {
          this.o.draining.delete(this);
          finish();
        };
        return;
      }
      if (this.slowTimer) clearTimeout(this.slowTimer);
      this.slowTimer = undefined;
      for (const c of this.slowQueue) if (!this.res.destroyed) this.res.write(c);
      this.slowQueue = [];
      finish();
      return;
    }
    this.flushNow();
    finish();
  }

  /** Destroys the connection (server shutdown of a stalled watch, or dropWatch). */
  destroy(): void {
    this.cleanup('server-close');
    this.res.destroy();
  }

  private flushNow(): void {
    if (this.pending.length && !this.res.destroyed && !this.res.writableEnded) this.res.write(this.pending.join(''));
    this.pending = [];
  }

  private finish(how: NonNullable<RequestRecord['ended']>): void {
    if (this.ended) return;
    this.cleanup(how);
    this.dispose();
  }

  private cleanup(how: NonNullable<RequestRecord['ended']>): void {
    if (this.ended) return;
    this.ended = true;
    this.o.record.ended = how;
    this.o.coll.listeners.delete(this.listener);
    for (const t of this.timers) {
      clearTimeout(t);
      clearInterval(t);
    }
    this.timers.clear();
    this.o.onEnd(this);
  }

  /** For server shutdown: clears slow-write timers too. */
  dispose(): void {
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.slowTimer = undefined;
    this.slowQueue = [];
    this.slowDone = undefined;
    this.o.draining.delete(this);
  }
}
