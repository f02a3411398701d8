import { Fifo } from './fifo.ts';

/** A key whose value was deleted while it waited: it keeps its place until the order reaches it. */
const GONE: unique symbol = Symbol('gone');

/**
 * The per-key backlog both coalescing queues are built on (`DeltaQueue`,
 * `EventQueue`): one value per key, keys leave in the order they first
 * arrived, and a key is queued at most once however often it is set. A key
 * whose value is deleted while it waits keeps its place: set again before the
 * order reaches it, it leaves from there. So the backlog never holds more
 * entries than there are distinct keys.
 */
export class KeyedBacklog<V> {
  /** Every key with a place in `order`; `GONE` for one whose value was deleted. */
  private readonly items = new Map<string, V | typeof GONE>();
  private readonly order = new Fifo<string>();
  private live = 0;

  /** Keys with a value. */
  get size(): number {
    return this.live;
  }

  get(key: string): V | undefined {
    const value = this.items.get(key);
    return value === GONE ? undefined : value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Keys with a value, in no particular order. */
  *keys(): IterableIterator<string> {
    for (const [key, value] of this.items) if (value !== GONE) yield key;
  }

  /** Sets a key's value; a key new to the backlog goes to the back of the order. */
  set(key: string, value: V): void {
    const had = this.items.get(key);
    if (had === undefined) this.order.push(key);
    if (had === undefined || had === GONE) this.live++;
    this.items.set(key, value);
  }

  /** Deletes a key's value; the key keeps its place in the order. */
  delete(key: string): void {
    const had = this.items.get(key);
    if (had === undefined || had === GONE) return;
    this.items.set(key, GONE);
    this.live--;
  }

  /** The value of the key at the front of the order (which stays there). */
  first(): V | undefined {
    while (this.order.length > 0) {
      const key = this.order.peek();
      const value = this.items.get(key)!;
      if (value !== GONE) return value;
      this.order.shift();
      this.items.delete(key);
    }
    return undefined;
  }

  /** Takes the key at the front of the order off the backlog, and returns its value. */
  shift(): V | undefined {
    const value = this.first();
    if (value === undefined) return undefined;
    this.items.delete(this.order.shift());
    this.live--;
    return value;
  }
}
