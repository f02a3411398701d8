import { IndexedHeap } from './indexedHeap.ts';

interface Entry<K> {
  readonly item: K;
  priority: number;
  /** When the item entered the heap or last moved to a higher priority: FIFO within a priority. */
  seq: number;
  index: number;
}

/**
 * Internal binary heap of ready items, one entry per item: the highest priority first, and within
 * a priority the item that reached it first. Push, pop and raise are O(log n); a push at a
 * priority no higher than everything queued (the plain-FIFO case) costs one comparison.
 */
export class PriorityHeap<K> extends IndexedHeap<Entry<K>> {
  private readonly byItem = new Map<K, Entry<K>>();
  private nextSeq = 0;

  constructor() {
    super((a, b) => a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq));
  }

  get length(): number {
    return this.heap.length;
  }

  has(item: K): boolean {
    return this.byItem.has(item);
  }

  /** Adds an item that is not in the heap (callers keep their own dedup set). */
  push(item: K, priority: number): void {
    const entry: Entry<K> = { item, priority, seq: this.nextSeq++, index: 0 };
    this.byItem.set(item, entry);
    this.insert(entry);
  }

  /**
   * Moves a queued item to a higher priority, behind the items already at that priority.
   * A priority that is not higher than the current one changes nothing.
   */
  raise(item: K, priority: number): void {
    const entry = this.byItem.get(item);
    if (entry === undefined || !(priority > entry.priority)) return;
    entry.priority = priority;
    entry.seq = this.nextSeq++;
    this.siftUp(entry.index);
  }

  /** The next item and its priority (check `length` first: items may be `undefined`). */
  pop(): { readonly item: K; readonly priority: number } {
    const top = this.takeFirst() as Entry<K>;
    this.byItem.delete(top.item);
    return top;
  }
}
