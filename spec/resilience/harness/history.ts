/**
 * What the server did (every state each object had), and what each
 * subscriber saw, checked event by event against it.
 */
import { keyOf, type InformerEvent, type KubeObject } from '../../../src/index.ts';

interface Meta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly labels?: Record<string, string> | null;
}

interface AnyObject {
  readonly metadata?: Meta;
}

function meta(object: AnyObject): Meta {
  return object.metadata ?? {};
}

function rvOf(object: AnyObject): number {
  return Number(meta(object).resourceVersion);
}

function keyOfAny(object: AnyObject): string {
  const m = meta(object);
  return m.namespace ? `${m.namespace}/${m.name}` : String(m.name);
}

interface State {
  readonly uid: string;
  readonly rev: string | undefined;
  readonly deleted: boolean;
}

/** Every state written to the server, by `key@resourceVersion`. */
export class ServerHistory {
  private readonly states = new Map<string, State>();

  /** An object as the server stored it (created or updated). */
  live(object: AnyObject): void {
    this.put(object, false);
  }

  /** The last state of a deleted object, carrying the deletion's resourceVersion. */
  deleted(object: AnyObject): void {
    this.put(object, true);
  }

  private put(object: AnyObject, deleted: boolean): void {
    const m = meta(object);
    this.states.set(`${keyOfAny(object)}@${m.resourceVersion}`, { uid: String(m.uid), rev: m.labels?.rev, deleted });
  }

  /** Why `object` is not a state the server had (as live, or as a deletion), or undefined when it is. */
  disagreement(object: AnyObject, deleted: boolean): string | undefined {
    const m = meta(object);
    const at = `${keyOfAny(object)}@${m.resourceVersion}`;
    const state = this.states.get(at);
    if (!state) return `${at} is no state the server ever had`;
    if (state.deleted !== deleted) return `${at} was ${state.deleted ? 'a deletion' : 'a live state'} on the server`;
    if (state.uid !== m.uid) return `${at} has uid ${m.uid}, the server's had ${state.uid}`;
    if (state.rev !== m.labels?.rev) return `${at} has content rev ${m.labels?.rev}, the server's had ${state.rev}`;
    return undefined;
  }
}

/** key → resourceVersion and uid: what a cache holds, to compare with the server. */
export type Snapshot = ReadonlyMap<string, { readonly rv: string; readonly uid: string }>;

export function snapshotOf(objects: Iterable<AnyObject>): Snapshot {
  const out = new Map<string, { rv: string; uid: string }>();
  for (const o of objects) out.set(keyOfAny(o), { rv: String(meta(o).resourceVersion), uid: String(meta(o).uid) });
  return out;
}

/** The differences between two snapshots, readably (empty when equal). */
export function snapshotDiff(actual: Snapshot, expected: Snapshot, limit = 6): string[] {
  const out: string[] = [];
  for (const [key, want] of expected) {
    const got = actual.get(key);
    if (!got) out.push(`missing ${key}@${want.rv}`);
    else if (got.rv !== want.rv || got.uid !== want.uid)
      out.push(`${key} at ${got.rv} (uid …${got.uid.slice(-4)}), server at ${want.rv} (uid …${want.uid.slice(-4)})`);
  }
  for (const [key, got] of actual) if (!expected.has(key)) out.push(`extra ${key}@${got.rv}`);
  return out.length > limit ? [...out.slice(0, limit), `… ${out.length - limit} more`] : out;
}

/**
 * One subscriber's view, rebuilt from its events, checked at every event:
 * no update before its add, no second add without a delete between, an
 * update's old object is what the subscriber last saw, every object is a
 * state the server had, resourceVersions of a key only move forward, a
 * resync changes nothing, a delete is of something seen.
 */
export class SubscriberView {
  readonly name: string;
  readonly view = new Map<string, KubeObject>();
  readonly violations: string[] = [];
  events = 0;
  private readonly lastRv = new Map<string, number>();
  private readonly history: ServerHistory;
  private readonly inScope: (object: AnyObject) => boolean;

  /**
   * An `on()` handler's view: its backlog coalesces per key (eventQueue.ts: updated + deleted → deleted), so a
   * missed deletion's tombstone may carry the informer's last state of the key, an update the handler never got.
   */
  private readonly coalesces: boolean;

  constructor(name: string, history: ServerHistory, inScope: (object: AnyObject) => boolean, options: { coalesces?: boolean } = {}) {
    this.name = name;
    this.history = history;
    this.inScope = inScope;
    this.coalesces = options.coalesces ?? false;
  }

  private violation(event: InformerEvent<KubeObject>, what: string): void {
    if (this.violations.length < 20)
      this.violations.push(`${this.name}, event ${this.events} (${event.type} ${keyOf(event.object)}): ${what}`);
  }

  apply(event: InformerEvent<KubeObject>): void {
    this.events++;
    const key = keyOf(event.object);
    const rv = rvOf(event.object);
    const seen = this.view.get(key);
    const last = this.lastRv.get(key) ?? 0;
    if (!this.inScope(event.object)) this.violation(event, 'the object is outside the informer’s namespace');
    switch (event.type) {
      case 'added': {
        if (seen) this.violation(event, `a second add without a delete between (had ${rvOf(seen)}, got ${rv})`);
        const wrong = this.history.disagreement(event.object, false);
        if (wrong) this.violation(event, wrong);
        if (rv <= last) this.violation(event, `went back in time: ${rv} after ${last}`);
        this.view.set(key, event.object);
        break;
      }
      case 'updated': {
        if (!seen) {
          this.violation(event, 'an update before its add');
        } else if (rvOf(event.oldObject) !== rvOf(seen)) {
          this.violation(event, `oldObject is at ${rvOf(event.oldObject)}, the subscriber last saw ${rvOf(seen)}`);
        }
        const wrong = this.history.disagreement(event.object, false);
        if (wrong) this.violation(event, wrong);
        const unchanged = rv === rvOf(event.oldObject);
        if (event.resync !== unchanged) this.violation(event, `resync is ${event.resync} for ${rvOf(event.oldObject)} → ${rv}`);
        if (rv < last || (rv === last && !event.resync)) this.violation(event, `went back in time: ${rv} after ${last}`);
        this.view.set(key, event.object);
        break;
      }
      case 'deleted': {
        if (!seen) {
          this.violation(event, 'a delete of an object it never saw');
        } else if (event.finalStateUnknown) {
          if (this.coalesces ? rv < rvOf(seen) : rv !== rvOf(seen))
            this.violation(event, `a missed deletion carries ${rv}, not the last state seen (${rvOf(seen)})`);
          const wrong = this.coalesces && rv !== rvOf(seen) ? this.history.disagreement(event.object, false) : undefined;
          if (wrong) this.violation(event, wrong);
        } else {
          const wrong = this.history.disagreement(event.object, true);
          if (wrong) this.violation(event, wrong);
          if (rv <= rvOf(seen)) this.violation(event, `the deletion at ${rv} is not after the last state seen (${rvOf(seen)})`);
        }
        this.view.delete(key);
        break;
      }
    }
    this.lastRv.set(key, Math.max(last, rv));
  }

  snapshot(): Snapshot {
    return snapshotOf(this.view.values());
  }
}
