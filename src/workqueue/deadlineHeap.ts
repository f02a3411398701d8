import { IndexedHeap } from './indexedHeap.ts';

interface Entry<K> {
  readonly item: K;
  readyAt: number;
  priority: number;
  readonly seq: number;
  index: number;
}

/** A pending delayed add as seen from outside the heap. */
export interface Deadline<K> {
  readonly item: K;
  readonly readyAt: number;
  /** The highest priority it was delayed with. */
  readonly priority: number;
}

/**
 * Internal binary min-heap of items keyed by their ready time, one entry per item.
 * Ties are broken by first-insertion order, so equal deadlines come out FIFO.
 */
export class DeadlineHeap<K> extends IndexedHeap<Entry<K>> {
  private readonly byItem = new Map<K, Entry<K>>();
  private nextSeq = 0;

  constructor() {
    super((a, b) => a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq));
  }

  get size(): number {
    return this.heap.length;
  }

  /**
   * Inserts the item, or moves its existing entry earlier; a later time never wins. The entry
   * keeps the higher of its priorities.
   */
  upsert(item: K, readyAt: number, priority: number): void {
    const existing = this.byItem.get(item);
    if (existing !== undefined) {
      if (priority > existing.priority) existing.priority = priority;
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.siftUp(existing.index);
      }
      return;
    }
    const entry: Entry<K> = { item, readyAt, priority, seq: this.nextSeq++, index: 0 };
    this.byItem.set(item, entry);
    this.insert(entry);
  }

  peek(): Deadline<K> | undefined {
    return this.heap[0];
  }

  pop(): Deadline<K> | undefined {
    const top = this.takeFirst();
    if (top !== undefined) this.byItem.delete(top.item);
    return top;
  }

  clear(): void {
    this.heap.length = 0;
    this.byItem.clear();
  }
}
