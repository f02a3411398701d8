/** A heap entry that knows where it sits, so that it can move up in O(log n) when its key changes. */
export interface HeapEntry {
  index: number;
}

/**
 * Internal binary heap of entries that know their index, `before` deciding which comes first: the
 * common part of the work queue's {@link PriorityHeap} and the delaying queue's {@link DeadlineHeap}.
 */
export class IndexedHeap<E extends HeapEntry> {
  protected readonly heap: E[] = [];
  private readonly before: (a: E, b: E) => boolean;

  constructor(before: (a: E, b: E) => boolean) {
    this.before = before;
  }

  /** Places a new entry. */
  protected insert(entry: E): void {
    entry.index = this.heap.length;
    this.heap.push(entry);
    this.siftUp(entry.index);
  }

  /** Removes and returns the first entry. */
  protected takeFirst(): E | undefined {
    const top = this.heap[0];
    if (top === undefined) return undefined;
    const last = this.heap.pop() as E;
    if (last !== top) {
      last.index = 0;
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  /** Restores the order after the entry at `index` moved towards the front. */
  protected siftUp(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(this.heap[i] as E, this.heap[parent] as E)) return;
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
      if (left < this.heap.length && this.before(this.heap[left] as E, this.heap[first] as E)) first = left;
      if (right < this.heap.length && this.before(this.heap[right] as E, this.heap[first] as E)) first = right;
      if (first === i) return;
      this.swap(i, first);
      i = first;
    }
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i] as E;
    const b = this.heap[j] as E;
    this.heap[i] = b;
    this.heap[j] = a;
    b.index = i;
    a.index = j;
  }
}
