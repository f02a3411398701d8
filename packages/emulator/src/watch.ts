/**
 * Watch streams: chunked NDJSON, one event per line, with replay from history,
 * synthetic initial ADDED events, bookmarks, timeouts, selector transitions,
 * and the watch faults.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultRequestInfo, OpenWatch, WatchFault } from './faults.ts';
import type { RequestRecord } from './requestLog.ts';
import type { ResourceDef } from './resources.ts';
import { type FieldSelector, type LabelSelector, matchesFields, matchesLabels } from './selectors.ts';
import { type Status, watchTooOld } from './status.ts';
import { type Collection, eventLine, type HistoryEvent } from './store.ts';
import type { StoredObject } from './types.ts';
import { resetStream } from './h2.ts';
import { gzip, type GzipSettings } from './gzip.ts';
import { garbageFrame, oversizeFrame, PROTOBUF_WATCH_TYPE, protobufFrame } from './protobuf/bodies.ts';

export interface WatchFilter {
  namespace: string | undefined;
  labels: LabelSelector;
  fields: FieldSelector;
}

/** Field values of an object for field selectors. */
export function fieldValues(def: ResourceDef, obj: StoredObject): Record<string, string> {
  const meta = obj.metadata ?? {};
  const out: Record<string, string> = {
    'metadata.name': meta.name ?? '',
    'metadata.namespace': def.namespaced ? (meta.namespace ?? '') : '',
  };
  for (const [k, get] of Object.entries(def.fields)) out[k] = get(obj) ?? '';
  return out;
}

export function matchesFilter(def: ResourceDef, f: WatchFilter, obj: StoredObject): boolean {
  if (f.namespace !== undefined && obj.metadata?.namespace !== f.namespace) return false;
  if (f.labels.length && !matchesLabels(f.labels, obj.metadata?.labels)) return false;
  if (f.fields.length && !matchesFields(f.fields, fieldValues(def, obj))) return false;
  return true;
}

export function bookmarkLine(def: ResourceDef, rv: number, initialEventsEnd = false, metadataOnly = false): string {
  const annotations = initialEventsEnd ? { 'k8s.io/initial-events-end': 'true' } : undefined;
  // A metadata-only watch's bookmarks are PartialObjectMetadata too, shaped like a built-in's (10e).
  const object = metadataOnly
    ? {
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: String(rv), creationTimestamp: null, ...(annotations ? { annotations } : {}) },
      }
    : def.builtin
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
  /** The request, as fault rules see it (live faults match on it). */
  info: FaultRequestInfo;
  /** Revision the watch starts after (replay) or the revision of the initial state. */
  startRv: number;
  /** Lines written before live events (replayed history or synthetic ADDED). */
  backlog: HistoryEvent[] | StoredObject[];
  backlogKind: 'history' | 'initial';
  /** Send the initial-events-end BOOKMARK after the backlog (sendInitialEvents). */
  initialEventsEndRv?: number;
  /** Send every object as a PartialObjectMetadata (`Accept: …;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`). */
  metadataOnly?: boolean;
  /** Send protobuf frames instead of JSON lines (`Accept: application/vnd.kubernetes.protobuf`, a kind it encodes). */
  protobuf?: boolean;
  /** Periodic and pre-timeout bookmarks (allowWatchBookmarks=true). */
  bookmarks?: { intervalMs: number; beforeTimeoutMs: number };
  timeoutMs?: number;
  /** The fault a rule gave this request, if any. */
  fault?: { fault: WatchFault; ruleId: number };
  record: RequestRecord;
  /** The request log's clock (ms since the server started). */
  now: () => number;
  /** The oldest revision the history still covers (for expireWatch messages). */
  floor: () => number;
  onEnd: (session: WatchSession) => void;
  /** Gzip the stream: every write one gzip member, so each event is readable as soon as it is out. */
  gzip?: GzipSettings;
  /** Sessions that ended but still trickle out a slowWatch backlog (disposed by the server's close). */
  draining: Set<WatchSession>;
}

/** A watch fault waiting for its trigger. */
interface Armed {
  readonly fault: Exclude<WatchFault, { type: 'slowWatch' }>;
  /** Events sent when it was armed: `afterEvents` counts from there. */
  readonly eventsAtArm: number;
}

/** One open watch response. */
export class WatchSession implements OpenWatch {
  private readonly res: ServerResponse;
  private readonly req: IncomingMessage;
  private readonly o: WatchOptions;
  private pending: string[] = [];
  private flushScheduled = false;
  private ended = false;
  private stalled = false;
  private progressRv: number;
  private events = 0;
  private armed: Armed[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listener = (ev: HistoryEvent): void => this.onEvent(ev);
  // slowWatch: once set, every later write trickles out
  private slow: { chunkBytes: number; delayMs: number } | undefined;
  private slowQueue: Buffer[] = [];
  private slowTimer: NodeJS.Timeout | undefined;
  private slowDone: (() => void) | undefined;

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
    const encoding: Record<string, string> = o.gzip ? { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : {};
    const type = o.protobuf ? PROTOBUF_WATCH_TYPE : 'application/json';
    o.record.contentType = type;
    this.res.writeHead(200, { 'Cache-Control': 'no-cache, private', 'Content-Type': type, ...encoding });
    this.res.flushHeaders();
    o.record.eventsSent = 0;
    o.record.bookmarksSent = 0;
    if (o.fault) this.arm(o.fault.fault);

    if (o.backlogKind === 'history') {
      for (const ev of o.backlog as HistoryEvent[]) this.onEvent(ev);
    } else {
      for (const obj of o.backlog as StoredObject[]) this.sendEvent(this.eventText('ADDED', obj));
    }
    if (o.initialEventsEndRv !== undefined && !this.ended) {
      this.progressRv = Math.max(this.progressRv, o.initialEventsEndRv);
      this.sendBookmark(this.bookmarkText(o.initialEventsEndRv, true));
    }
    if (this.ended || this.stalled) return;
    const startedAt = performance.now();
    const deadline = o.timeoutMs === undefined ? undefined : startedAt + o.timeoutMs;
    // kube-apiserver sends one bookmark 2 s before the deadline (cacheWatcher.nextBookmarkTime); when the
    // timeout is not longer than that lead, the emulator sends it at the deadline, just before the end.
    const b = o.bookmarks;
    const preTimeoutAt = b && deadline !== undefined && o.timeoutMs! > b.beforeTimeoutMs ? deadline - b.beforeTimeoutMs : undefined;
    if (o.timeoutMs !== undefined) {
      this.timer(() => {
        if (b && preTimeoutAt === undefined) this.bookmarkIfChanged();
        this.end('timeout');
      }, o.timeoutMs);
    }
    if (b) this.scheduleBookmark(startedAt, b.intervalMs, preTimeoutAt);
  }

  /**
   * Periodic bookmarks every `intervalMs` from the start, and one at `preTimeoutAt`, after which none:
   * like kube-apiserver, where the next bookmark is min(now + 1 min, deadline − 2 s) and none once that has passed.
   */
  private scheduleBookmark(from: number, intervalMs: number, preTimeoutAt: number | undefined): void {
    if (intervalMs <= 0 && preTimeoutAt === undefined) return;
    const periodic = intervalMs > 0 ? from + intervalMs : Infinity;
    const pre = preTimeoutAt !== undefined && preTimeoutAt <= periodic;
    const at = pre ? preTimeoutAt : periodic;
    this.timer(
      () => {
        this.bookmarkIfChanged();
        if (!pre) this.scheduleBookmark(at, intervalMs, preTimeoutAt);
      },
      Math.max(0, at - performance.now()),
    );
  }

  /** Like kube-apiserver: a bookmark only once the resource changed after the watch's start (03c, 03d). */
  private bookmarkIfChanged(): void {
    if (this.progressRv > this.o.startRv) this.sendBookmark(this.bookmarkText(this.progressRv, false));
  }

  get def(): ResourceDef {
    return this.o.def;
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  get info(): FaultRequestInfo {
    return this.o.info;
  }

  /** A stalled or ended watch writes nothing more, so a live fault could not show. */
  get acceptsFaults(): boolean {
    return !this.ended && !this.stalled;
  }

  /** A live fault (from `faults.add({ live: true, … })`): recorded on this watch, triggered from now. */
  applyFault(fault: WatchFault, ruleId: number): void {
    if (!this.acceptsFaults) return;
    this.o.record.fault = fault.type;
    this.o.record.faultId = ruleId;
    this.arm(fault);
  }

  private timer(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  /** Arms a fault: at once without a trigger (or afterEvents 0), else on its events count or timer. */
  private arm(fault: WatchFault): void {
    if (fault.type === 'slowWatch') {
      this.slow = { chunkBytes: Math.max(1, fault.chunkBytes ?? 64), delayMs: fault.delayMs ?? 5 };
      this.fired();
      return;
    }
    const armed: Armed = { fault, eventsAtArm: this.events };
    if ((fault.afterEvents === undefined && fault.afterMs === undefined) || fault.afterEvents === 0) {
      this.fire(armed.fault);
      return;
    }
    this.armed.push(armed);
    if (fault.afterMs !== undefined) this.timer(() => this.fireArmed(armed), fault.afterMs);
  }

  private fireArmed(armed: Armed): void {
    const i = this.armed.indexOf(armed);
    if (i < 0) return;
    this.armed.splice(i, 1);
    this.fire(armed.fault);
  }

  private fired(): void {
    this.o.record.faultFiredAt = this.o.now();
  }

  private onEvent(ev: HistoryEvent): void {
    if (this.ended) return;
    // A watch from a future revision waits for it.
    if (ev.rv <= this.o.startRv) return;
    this.progressRv = Math.max(this.progressRv, ev.rv);
    const { def, filter } = this.o;
    const trivial = filter.namespace === undefined && !filter.labels.length && !filter.fields.length;
    if (trivial) {
      this.sendEvent(this.historyText(ev));
      return;
    }
    const cur = ev.type !== 'DELETED' && matchesFilter(def, filter, ev.object);
    const prev = ev.type === 'ADDED' ? false : matchesFilter(def, filter, ev.type === 'DELETED' ? ev.object : ev.prev!);
    if (ev.type === 'DELETED') {
      if (prev) this.sendEvent(this.historyText(ev));
    } else if (cur && prev) this.sendEvent(this.historyText(ev));
    else if (cur) this.sendEvent(this.eventText('ADDED', ev.object));
    else if (prev) {
      // The object stopped matching: DELETED with its previous state at the event's revision.
      const old = ev.prev!;
      const obj = { ...old, metadata: { ...old.metadata, resourceVersion: String(ev.rv) } };
      this.sendEvent(this.eventText('DELETED', obj));
    }
  }

  /** An event of a stored write: its line (or frame), made once for every watcher. */
  private historyText(ev: HistoryEvent): string {
    return this.o.protobuf ? ev.toFrame() : ev.toLine(this.o.metadataOnly);
  }

  private eventText(type: string, obj: StoredObject): string {
    return this.o.protobuf ? protobufFrame(type, obj) : eventLine(type, obj, this.o.metadataOnly);
  }

  private bookmarkText(rv: number, initialEventsEnd: boolean): string {
    const line = bookmarkLine(this.o.def, rv, initialEventsEnd, this.o.metadataOnly);
    return this.o.protobuf ? protobufFrame('BOOKMARK', (JSON.parse(line) as { object: object }).object) : line;
  }

  private errorText(status: Status): string {
    return this.o.protobuf ? protobufFrame('ERROR', status) : errorLine(status);
  }

  private sendEvent(line: string): void {
    if (this.ended || this.stalled) return;
    this.write(line);
    this.events++;
    this.o.record.eventsSent = this.events;
    for (const a of [...this.armed]) {
      const n = a.fault.afterEvents;
      if (n !== undefined && this.events - a.eventsAtArm >= n) this.fireArmed(a);
    }
  }

  private sendBookmark(line: string): void {
    if (this.ended || this.stalled) return;
    this.write(line);
    this.o.record.bookmarksSent = (this.o.record.bookmarksSent ?? 0) + 1;
  }

  /** Applies a triggered watch fault. */
  private fire(f: Armed['fault']): void {
    if (this.ended || this.stalled) return;
    this.fired();
    switch (f.type) {
      case 'dropWatch':
        this.drop(f.http2Code);
        return;
      case 'stallWatch':
        this.stalled = true;
        this.flush();
        this.clearTimers();
        this.armed = [];
        this.o.coll.listeners.delete(this.listener);
        return;
      case 'malformedLine': {
        const line = f.line ?? '{"type":"MODIFIED","object":{"kind":"';
        this.write(this.o.protobuf ? garbageFrame(line) : `${line}\n`);
        return;
      }
      case 'oversizeLine': {
        const size = f.bytes ?? 3 * 1024 * 1024;
        if (this.o.protobuf) return this.write(oversizeFrame(size));
        const head = bookmarkLine(this.o.def, this.progressRv, false, this.o.metadataOnly);
        const pad = 'x'.repeat(Math.max(0, size - head.length - 64));
        const obj = JSON.parse(head) as { object: { metadata: Record<string, unknown> } };
        obj.object.metadata['annotations'] = { 'emulator.rx-informer.dev/padding': pad };
        this.write(`${JSON.stringify(obj)}\n`);
        return;
      }
      case 'closeWatch':
        this.end('fault');
        return;
      case 'expireWatch':
        this.write(this.errorText(watchTooOld(this.o.startRv, this.o.floor())));
        this.end('fault');
        return;
      default: {
        const unhandled: never = f;
        throw new Error(`unhandled watch fault ${JSON.stringify(unhandled)}`);
      }
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
    if (this.slow) this.slowWrite(Buffer.from(this.encode(data)), this.slow);
    else this.res.write(this.encode(data));
  }

  /** The bytes of `data` on the wire: as they are (protobuf frames: one byte per character), or one gzip member. */
  private encode(data: string): string | Buffer {
    const bytes = this.o.protobuf ? Buffer.from(data, 'latin1') : data;
    return this.o.gzip ? gzip(bytes, this.o.gzip) : bytes;
  }

  private slowWrite(buf: Buffer, slow: { chunkBytes: number; delayMs: number }): void {
    for (let i = 0; i < buf.length; i += slow.chunkBytes) this.slowQueue.push(buf.subarray(i, i + slow.chunkBytes));
    if (this.slowTimer) return;
    const step = (): void => {
      this.slowTimer = undefined;
      const chunk = this.slowQueue.shift();
      if (chunk && !this.res.destroyed) this.res.write(chunk);
      if (this.slowQueue.length) this.slowTimer = setTimeout(step, slow.delayMs);
      else this.slowDone?.();
    };
    this.slowTimer = setTimeout(step, slow.delayMs);
  }

  /** Flushes what was written, then closes the connection without the terminating chunk. */
  private drop(http2Code?: 'INTERNAL_ERROR' | 'NO_ERROR'): void {
    this.cleanup('fault');
    this.dispose();
    const sock = this.res.socket;
    // HTTP/2: only this stream is reset (after what was written), not the connection it shares.
    if (resetStream(this.res, this.pending.length ? this.encode(this.pending.join('')) : '', http2Code)) return void (this.pending = []);
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
    if (this.slow) {
      const data = this.pending.join('');
      this.pending = [];
      if (data) this.slowWrite(Buffer.from(this.encode(data)), this.slow);
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
    // HTTP/2: reset the stream with an error code (a bare destroy would send RST_STREAM NO_ERROR, which reads as an end).
    if (!resetStream(this.res, '')) this.res.destroy();
  }

  private flushNow(): void {
    if (this.pending.length && !this.res.destroyed && !this.res.writableEnded) this.res.write(this.encode(this.pending.join('')));
    this.pending = [];
  }

  private finish(how: NonNullable<RequestRecord['ended']>): void {
    if (this.ended) return;
    this.cleanup(how);
    this.dispose();
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private cleanup(how: NonNullable<RequestRecord['ended']>): void {
    if (this.ended) return;
    this.ended = true;
    this.armed = [];
    this.o.record.ended = how;
    this.o.coll.listeners.delete(this.listener);
    this.clearTimers();
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
