import { KeyedBacklog } from '../util/keyedBacklog.ts';
import { appendDelta, type Delta, type Deltas } from './deltas.ts';

/**
 * A per-key queue of deltas: each key is queued at most once, keys leave in
 * the order they first arrived, and a key's deltas accumulate (with client-go's
 * deletion dedup) while it waits. So however far a consumer falls behind, the
 * queue never holds more entries than there are distinct keys.
 */
export class DeltaQueue<T> {
  private readonly items = new KeyedBacklog<{ readonly key: string; readonly deltas: Delta<T>[]; isInInitialList: boolean }>();

  get size(): number {
    return this.items.size;
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  /** The deltas waiting for a key (oldest first), if any. */
  peek(key: string): readonly Delta<T>[] | undefined {
    return this.items.get(key)?.deltas;
  }

  keys(): IterableIterator<string> {
    return this.items.keys();
  }

  add(key: string, delta: Delta<T>, isInInitialList: boolean): void {
    const entry = this.items.get(key);
    if (entry) {
      appendDelta(entry.deltas, delta);
      entry.isInInitialList &&= isInInitialList;
    } else {
      this.items.set(key, { key, deltas: [delta], isInInitialList });
    }
  }

  /** Merges a whole `Deltas` entry into the queue. */
  addAll(entry: Deltas<T>): void {
    for (const delta of entry.deltas) this.add(entry.key, delta, entry.isInInitialList);
  }

  /** Takes the oldest key's deltas off the queue. */
  pop(): Deltas<T> | undefined {
    // The entry is handed on as it is: the queue no longer refers to it.
    return this.items.shift();
  }
}
