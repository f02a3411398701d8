/**
 * Internal FIFO of items with amortised O(1) push and shift.
 * Callers check `length` before `shift()` (items may themselves be `undefined`).
 */
export class Fifo<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  /** The item `shift()` would return (check `length` first). */
  peek(): T {
    return this.items[this.head] as T;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T {
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item as T;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
