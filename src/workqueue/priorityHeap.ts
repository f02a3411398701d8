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
export class PriorityHeap<K> {
  private readonly heap: Array<Entry<K>> = [];
  private readonly byItem = new Map<K, Entry<K>>();
  private nextSeq = 0;

  get length(): number {
    return this.heap.length;
  }

  has(item: K): boolean {
    return this.byItem.has(item);
  }

  /** Adds an item that is not in the heap (callers keep their own dedup set). */
  push(item: K, priority: number): void {
    const entry: Entry<K> = { item, priority, seq: this.nextSeq++, index: this.heap.length };
    this.heap.push(entry);
    this.byItem.set(item, entry);
    this.siftUp(entry.index);
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
    const top = this.heap[0] as Entry<K>;
    const last = this.heap.pop() as Entry<K>;
    if (last !== top) {
      last.index = 0;
      this.heap[0] = last;
      this.siftDown(0);
    }
    this.byItem.delete(top.item);
    return top;
  }

  private less(a: Entry<K>, b: Entry<K>): boolean {
    return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i] as Entry<K>;
    const b = this.heap[j] as Entry<K>;
    this.heap[i] = b;
    this.heap[j] = a;
    b.index = i;
    a.index = j;
  }

  private siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.heap[i] as Entry<K>, this.heap[parent] as Entry<K>)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private siftDown(index: number): void {
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let first = i;
      if (left < this.heap.length && this.less(this.heap[left] as Entry<K>, this.heap[first] as Entry<K>)) first = left;
      if (right < this.heap.length && this.less(this.heap[right] as Entry<K>, this.heap[first] as Entry<K>)) first = right;
      if (first === i) return;
      this.swap(i, first);
      i = first;
    }
  }
}
