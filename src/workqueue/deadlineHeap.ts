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
export class DeadlineHeap<K> {
  private readonly heap: Array<Entry<K>> = [];
  private readonly byItem = new Map<K, Entry<K>>();
  private nextSeq = 0;

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
    const entry: Entry<K> = { item, readyAt, priority, seq: this.nextSeq++, index: this.heap.length };
    this.heap.push(entry);
    this.byItem.set(item, entry);
    this.siftUp(entry.index);
  }

  peek(): Deadline<K> | undefined {
    return this.heap[0];
  }

  pop(): Deadline<K> | undefined {
    const top = this.heap[0];
    if (top === undefined) return undefined;
    const last = this.heap.pop() as Entry<K>;
    if (last !== top) {
      last.index = 0;
      this.heap[0] = last;
      this.siftDown(0);
    }
    this.byItem.delete(top.item);
    return top;
  }

  clear(): void {
    this.heap.length = 0;
    this.byItem.clear();
  }

  private less(a: Entry<K>, b: Entry<K>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
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
      let smallest = i;
      if (left < this.heap.length && this.less(this.heap[left] as Entry<K>, this.heap[smallest] as Entry<K>)) {
        smallest = left;
      }
      if (right < this.heap.length && this.less(this.heap[right] as Entry<K>, this.heap[smallest] as Entry<K>)) {
        smallest = right;
      }
      if (smallest === i) return;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}
