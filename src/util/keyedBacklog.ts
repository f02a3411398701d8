import { Fifo } from './fifo.ts';

/** A key whose value was deleted while it waited: it keeps its place until the order reaches it. */
const GONE: unique symbol = Symbol('gone');

/** Deleted keys kept in their places beyond the keys with a value, before {@link KeyedBacklog} drops their places. */
const GONE_SLACK = 1024;

/**
 * The per-key backlog both coalescing queues are built on (`DeltaQueue`,
 * `EventQueue`): one value per key, keys leave in the order they first
 * arrived, and a key is queued at most once however often it is set. A key
 * whose value is deleted while it waits keeps its place: set again before the
 * order reaches it, it leaves from there. Unless those places are many: once
 * the deleted keys holding one are more than the keys with a value plus
 * 1,024 (a stalled consumer, and names created and deleted without end), they
 * are all dropped at once (amortised O(1) a delete), and such a key set again
 * goes to the back. So the backlog holds at most 2 × `size` + 1,024 entries
 * (`held`), whatever number of keys came and went.
 */
export class KeyedBacklog<V> {
  /** Every key with a place in `order`; `GONE` for one whose value was deleted. */
  private readonly items = new Map<string, V | typeof GONE>();
  private readonly order = new Fifo<string>();
  private live = 0;
  /** Entries of `items` that are GONE (still holding a place in `order`). */
  private gone = 0;
  private readonly slack: number;

  /** @param slack deleted keys held beyond the keys with a value before their places are dropped (tests use a few). */
  constructor(slack = GONE_SLACK) {
    this.slack = slack;
  }

  /** Keys with a value. */
  get size(): number {
    return this.live;
  }

  /** Entries held: the keys with a value and the deleted keys still holding a place; at most 2 × `size` + 1,024. */
  get held(): number {
    return this.items.size;
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
    if (had === GONE) this.gone--;
    if (had === undefined || had === GONE) this.live++;
    this.items.set(key, value);
  }

  /** Deletes a key's value; the key keeps its place in the order (until too many do: see the class). */
  delete(key: string): void {
    const had = this.items.get(key);
    if (had === undefined || had === GONE) return;
    this.items.set(key, GONE);
    this.live--;
    this.gone++;
    this.bound();
  }

  /** Keeps the deleted keys holding a place at most `size` + slack (checked wherever either count moves the wrong way). */
  private bound(): void {
    if (this.gone > this.live + this.slack) this.compact();
  }

  /**
   * Drops the places of the deleted keys, keeping the order of the others: O(entries), once more than half of them
   * are deleted ones, so amortised O(1) per delete. A key set again later goes to the back.
   */
  private compact(): void {
    const keep: string[] = [];
    while (this.order.length > 0) {
      const key = this.order.shift();
      if (this.items.get(key) === GONE) this.items.delete(key);
      else keep.push(key);
    }
    for (const key of keep) this.order.push(key);
    this.gone = 0;
  }

  /** The value of the key at the front of the order (which stays there). */
  first(): V | undefined {
    while (this.order.length > 0) {
      const key = this.order.peek();
      const value = this.items.get(key)!;
      if (value !== GONE) return value;
      this.order.shift();
      this.items.delete(key);
      this.gone--;
    }
    return undefined;
  }

  /** Takes the key at the front of the order off the backlog, and returns its value. */
  shift(): V | undefined {
    const value = this.first();
    if (value === undefined) return undefined;
    this.items.delete(this.order.shift());
    this.live--;
    this.bound();
    return value;
  }
}
