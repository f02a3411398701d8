/**
 * Storage: one global revision counter (like etcd's), a Map per resource keyed
 * by `namespace/name` (or `name`), and a bounded per-resource history of
 * events used to replay watches and to serve lists at older revisions.
 */
import type { ResourceDef } from './resources.ts';
import { ResourceRegistry } from './resources.ts';
import { expired, LIST_RV_TOO_OLD, tooLargeResourceVersion } from './status.ts';
import { orderKeys } from './json.ts';
import { protobufFrame } from './protobuf/bodies.ts';
import type { StoredObject } from './types.ts';

export type StoredEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed write. */
export class HistoryEvent {
  readonly rv: number;
  readonly type: StoredEventType;
  readonly key: string;
  /** New state; for DELETED the last state carrying the deletion's resourceVersion. */
  readonly object: StoredObject;
  /** State before the write (MODIFIED, DELETED). */
  readonly prev: StoredObject | undefined;
  private line: string | undefined;
  private partialLine: string | undefined;
  private frame: string | undefined;

  constructor(rv: number, type: StoredEventType, key: string, object: StoredObject, prev: StoredObject | undefined) {
    this.rv = rv;
    this.type = type;
    this.key = key;
    this.object = object;
    this.prev = prev;
  }

  /** The NDJSON line of this event, serialized once for all watchers (of each shape). */
  toLine(metadataOnly = false): string {
    if (metadataOnly) return (this.partialLine ??= eventLine(this.type, this.object, true));
    this.line ??= eventLine(this.type, this.object);
    return this.line;
  }

  /** The protobuf watch frame of this event (one byte per character), encoded once for all watchers. */
  toFrame(): string {
    return (this.frame ??= protobufFrame(this.type, this.object));
  }
}

const jsonCache = new WeakMap<object, string>();

/** JSON of a stored (never mutated) object, cached. */
export function objectJson(obj: StoredObject): string {
  let s = jsonCache.get(obj);
  if (s === undefined) {
    s = JSON.stringify(obj);
    jsonCache.set(obj, s);
  }
  return s;
}

const itemJsonCache = new WeakMap<object, string>();

/** JSON of a list item of a built-in kind: no kind/apiVersion (02c). */
export function builtinItemJson(obj: StoredObject): string {
  let s = itemJsonCache.get(obj);
  if (s === undefined) {
    const { kind: _k, apiVersion: _a, ...rest } = obj;
    s = JSON.stringify(rest);
    itemJsonCache.set(obj, s);
  }
  return s;
}

export function eventLine(type: string, obj: StoredObject, metadataOnly = false): string {
  return `{"type":"${type}","object":${metadataOnly ? partialJson(obj) : objectJson(obj)}}\n`;
}

/** StoredObjectMeta's fields in Go struct order: how kube-apiserver encodes a PartialObjectMetadata's metadata (10a, 10b). */
export const OBJECT_META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'clusterName',
  'managedFields',
] as const;

const partialJsonCache = new WeakMap<object, string>();

/**
 * JSON of a stored object as a `PartialObjectMetadata` (10a, 10b, 10e): kind,
 * apiVersion meta.k8s.io/v1 and the metadata in StoredObjectMeta's order, whatever
 * the kind (custom resources too). Cached per object, like the full JSON, so
 * a metadata-only answer is serialized once however many watchers get it.
 */
export function partialJson(obj: StoredObject): string {
  let s = partialJsonCache.get(obj);
  if (s === undefined) {
    const metadata = JSON.stringify(orderKeys((obj.metadata ?? {}) as Record<string, unknown>, OBJECT_META_ORDER));
    s = `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":${metadata}}`;
    partialJsonCache.set(obj, s);
  }
  return s;
}

export type EventListener = (ev: HistoryEvent) => void;

export class Collection {
  readonly def: ResourceDef;
  readonly items = new Map<string, StoredObject>();
  /** Events in revision order; `log[logStart..]` are live. */
  private log: HistoryEvent[] = [];
  private logStart = 0;
  /** History is complete for revisions > floor. */
  floor: number;
  /** Revision of the latest event on this resource. */
  latestRv: number;
  readonly listeners = new Set<EventListener>();
  /** The keys in order, built on first use and then kept sorted write by write (a list never sorts them again). */
  private sorted: string[] | undefined;
  /** The last state rebuilt at an older revision (one list's pages ask for the same one): immutable, so kept until another is asked for. */
  historical: Snapshot | undefined;

  constructor(def: ResourceDef, rv: number) {
    this.def = def;
    this.floor = 0;
    this.latestRv = rv;
  }

  get historyLength(): number {
    return this.log.length - this.logStart;
  }

  append(ev: HistoryEvent, limit: number): void {
    this.log.push(ev);
    while (this.historyLength > limit) {
      const dropped = this.log[this.logStart]!;
      this.floor = dropped.rv;
      this.logStart++;
    }
    if (this.logStart > 1024 && this.logStart * 2 > this.log.length) {
      this.log = this.log.slice(this.logStart);
      this.logStart = 0;
    }
  }

  /** Drops events with rv < `rv`: etcd's Compact(rv) keeps revision `rv` itself (a watch from rv - 1 replays it: 04k). */
  compact(rv: number): void {
    while (this.logStart < this.log.length && this.log[this.logStart]!.rv < rv) this.logStart++;
    if (rv - 1 > this.floor) this.floor = rv - 1;
    this.log = this.log.slice(this.logStart);
    this.logStart = 0;
  }

  /** Live events with rv > `rv`, oldest first. */
  eventsAfter(rv: number): HistoryEvent[] {
    let lo = this.logStart;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return this.log.slice(lo);
  }

  set(key: string, obj: StoredObject): void {
    if (this.sorted !== undefined && !this.items.has(key)) this.sorted.splice(lowerBound(this.sorted, key), 0, key);
    this.items.set(key, obj);
  }

  remove(key: string): void {
    if (this.items.delete(key) && this.sorted !== undefined) this.sorted.splice(lowerBound(this.sorted, key), 1);
  }

  /** The keys in order; the array is the collection's own, changed in place by the next write (read it at once). */
  sortedKeys(): string[] {
    this.sorted ??= [...this.items.keys()].sort(compareKeys);
    return this.sorted;
  }
}

/** etcd orders keys bytewise; for the ASCII names Kubernetes allows, UTF-16 order is the same. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The index of the first of the sorted `keys` not before `target`. */
export function lowerBound(keys: readonly string[], target: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(keys[mid]!, target) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function objectKey(def: ResourceDef, namespace: string | undefined, name: string): string {
  return def.namespaced ? `${namespace ?? ''}/${name}` : name;
}

/** A consistent view of one resource at one revision: entries sorted by key. */
export interface Snapshot {
  rv: number;
  keys: string[];
  get(key: string): StoredObject;
}

export class Store {
  private rev: number;
  /** Global compaction: history below this revision is gone for every resource (etcd keeps the revision itself). */
  compactedRv = 0;
  readonly historyLimit: number;
  private readonly collections = new Map<string, Collection>();

  constructor(opts: { historyLimit: number; startRevision: number }) {
    this.historyLimit = opts.historyLimit;
    this.rev = opts.startRevision;
  }

  get revision(): number {
    return this.rev;
  }

  /** Claims the next revision. Every write bumps it, whatever the resource. */
  nextRevision(): number {
    return ++this.rev;
  }

  collection(def: ResourceDef): Collection {
    const k = ResourceRegistry.key(def.group, def.version, def.plural);
    let c = this.collections.get(k);
    if (!c) {
      c = new Collection(def, this.rev);
      c.floor = Math.max(this.compactedRv - 1, 0);
      this.collections.set(k, c);
    }
    return c;
  }

  dropCollection(def: ResourceDef): void {
    this.collections.delete(ResourceRegistry.key(def.group, def.version, def.plural));
  }

  allCollections(): Collection[] {
    return [...this.collections.values()];
  }

  /** History of `coll` is complete for revisions > this. */
  floorOf(coll: Collection): number {
    return Math.max(coll.floor, this.compactedRv - 1);
  }

  /** Applies a write: updates the map, records history, notifies watchers. */
  commit(
    coll: Collection,
    rv: number,
    type: StoredEventType,
    key: string,
    object: StoredObject,
    prev: StoredObject | undefined,
  ): HistoryEvent {
    if (type === 'DELETED') coll.remove(key);
    else coll.set(key, object);
    const ev = new HistoryEvent(rv, type, key, object, prev);
    coll.latestRv = rv;
    coll.append(ev, this.historyLimit);
    for (const l of [...coll.listeners]) l(ev);
    return ev;
  }

  /** Compacts all history up to `rv` (default: the current revision). */
  compact(rv: number = this.rev): void {
    const target = Math.min(rv, this.rev);
    if (target <= this.compactedRv) return;
    this.compactedRv = target;
    for (const c of this.collections.values()) c.compact(target);
  }

  /**
   * The state of `coll` at revision `rv`, rebuilt by undoing later events.
   * Throws 410 Expired when the history needed is gone, 504 when `rv` is in the future.
   */
  snapshot(coll: Collection, rv: number, expiredError = () => expired(LIST_RV_TOO_OLD)): Snapshot {
    if (rv > this.rev) throw tooLargeResourceVersion(rv, this.rev);
    if (rv < this.compactedRv) throw expiredError();
    if (rv >= coll.latestRv) {
      const items = coll.items;
      return { rv, keys: coll.sortedKeys(), get: (k) => items.get(k)! };
    }
    if (rv < coll.floor) throw expiredError();
    if (coll.historical?.rv === rv) return coll.historical;
    const state = new Map(coll.items);
    const later = coll.eventsAfter(rv);
    /** Keys there at `rv` and gone now. */
    const gone = new Set<string>();
    for (let i = later.length - 1; i >= 0; i--) {
      const ev = later[i]!;
      if (ev.type === 'ADDED') state.delete(ev.key);
      else {
        if (!coll.items.has(ev.key)) gone.add(ev.key);
        state.set(ev.key, ev.prev!);
      }
    }
    // The current order without what came later, merged with what has gone since: no sort of the whole collection.
    const kept = coll.sortedKeys().filter((key) => state.has(key));
    const back = [...gone].filter((key) => state.has(key)).sort(compareKeys);
    const keys: string[] = [];
    let k = 0;
    for (const key of back) {
      while (k < kept.length && compareKeys(kept[k]!, key) < 0) keys.push(kept[k++]!);
      keys.push(key);
    }
    while (k < kept.length) keys.push(kept[k++]!);
    coll.historical = { rv, keys, get: (key) => state.get(key)! };
    return coll.historical;
  }
}
