import { keyOf } from '../0-model/objects.ts';
import { KeyedBacklog } from '../util/keyedBacklog.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';

/**
 * A per-key queue of informer events for a consumer that is slower than the
 * informer. While a key waits, its new events merge into what is queued:
 *
 * - added + updated → added (newest object; of the initial list if both were, or if the update is a resync);
 *   updated + updated → one updated (oldest old, newest new)
 * - added + deleted → nothing (the consumer never saw it); updated + deleted → deleted
 * - deleted + added → both kept, in order (a recreate is never lost)
 *
 * So a key holds at most two events, however far the consumer falls behind;
 * keys leave in the order they first arrived, and the consumer always ends at
 * the informer's state. A key whose events cancelled out keeps its place
 * while such keys are at most 1,024 more than the keys waiting (`KeyedBacklog`):
 * a stalled consumer under churn of new names holds no more than that.
 */
export class EventQueue<T extends { readonly metadata: { readonly name: string; readonly namespace?: string | undefined } }> {
  /** A key whose events cancelled out keeps its place (see `KeyedBacklog`). */
  private readonly items = new KeyedBacklog<InformerEvent<T>[]>();
  private count = 0;

  /** Events waiting. */
  get size(): number {
    return this.count;
  }

  /** Distinct keys waiting. */
  get keys(): number {
    return this.items.size;
  }

  push(event: InformerEvent<T>): void {
    const key = keyOf(event.object);
    const queued = this.items.get(key);
    if (!queued) {
      this.items.set(key, [event]);
      this.count++;
      return;
    }
    const last = queued[queued.length - 1]!;
    const merged = merge(last, event);
    if (merged === 'append') {
      queued.push(event);
      this.count++;
    } else if (merged === 'cancel') {
      queued.pop();
      this.count--;
      if (queued.length === 0) this.items.delete(key);
    } else {
      queued[queued.length - 1] = merged;
    }
  }

  /** The next event: the oldest event of the key that arrived first. */
  shift(): InformerEvent<T> | undefined {
    const queued = this.items.first();
    if (!queued) return undefined;
    const event = queued.shift()!;
    this.count--;
    if (queued.length === 0) this.items.shift();
    return event;
  }
}

function merge<T>(last: InformerEvent<T>, next: InformerEvent<T>): InformerEvent<T> | 'append' | 'cancel' {
  const isInInitialList = last.isInInitialList && next.isInInitialList;
  if (last.type === 'deleted') return next.type === 'deleted' ? last : 'append';
  if (next.type === 'deleted') return last.type === 'added' ? 'cancel' : next;
  if (last.type === 'added') {
    // A resync (or a relist that found it unchanged) changed nothing: still the object the list brought.
    if (next.type === 'updated' && next.resync) return next.object === last.object ? last : { ...last, object: next.object };
    return { type: 'added', object: next.object, isInInitialList };
  }
  // last is updated; next is added (only after a delete we no longer hold) or updated
  if (next.type === 'added') return 'append';
  return { type: 'updated', oldObject: last.oldObject, object: next.object, isInInitialList, resync: last.resync && next.resync };
}
