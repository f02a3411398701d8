/**
 * Lazy decoding of a list response (the transport's list body with `lazyDecode`): the list's own members are
 * parsed, and `items` becomes an array of lazy objects (lazyJson.ts), read as the bytes arrive.
 */
import {
  QUOTE,
  OPEN_BRACE,
  CLOSE_BRACE,
  OPEN_BRACKET,
  CLOSE_BRACKET,
  COMMA,
  COLON,
  fail,
  skipSpace,
  stringEnd,
  valueEnd,
  text,
  keyAt,
} from './jsonScanner.ts';
import { defineEager, lazyObjectAt, type KeepObject, bytesOf } from './lazyJson.ts';

/**
 * A list response (its text or UTF-8 bytes) with lazily decoded items: the
 * list's own members are parsed, `items` becomes an array of lazy objects,
 * each holding texts of its own, so that a cached item never keeps its whole
 * page alive.
 */
export function lazyParseList(input: string | Buffer, keep?: KeepObject): Record<string, unknown> {
  const reader = new LazyListReader(keep);
  reader.push(bytesOf(input));
  return reader.end();
}

/** Where a {@link LazyListReader} is in the list's text. */
const ListAt = {
  /** Before the list's `{`. */
  Start: 0,
  /** After `{`: a key or `}`. */
  FirstKey: 1,
  /** After `,`: a key. */
  Key: 2,
  /** After `"items": [`: an item or `]`. */
  FirstItem: 3,
  /** After an item's `,`: an item. */
  Item: 4,
  /** After an item: `,` or `]`. */
  AfterItem: 5,
  /** After a member's value: `,` or `}`. */
  AfterMember: 6,
  /** After the list's `}`: only white space. */
  Done: 7,
} as const;
type ListAt = (typeof ListAt)[keyof typeof ListAt];

/**
 * A list response decoded lazily as its bytes arrive (the transport's list body with `lazyDecode`), as
 * {@link lazyParseList} decodes it whole: no page is ever held as one buffer or one string. The bytes
 * that arrived and were not taken yet wait in one window (reused: items keep copies of their texts).
 *
 * Each step (a key and its value, an item, a separator) is taken only when the bytes it read end before
 * those that arrived (so a number cut by a chunk is never taken short), and tried only once enough bytes
 * wait (see `ahead`); one that cannot be taken yet is tried again later, and for good at {@link end}.
 * A malformed list is therefore reported by `end`, never by `push`.
 */
export class LazyListReader {
  private readonly keep: KeepObject | undefined;
  private readonly list: Record<string, unknown> = {};
  private items: unknown[] = [];
  private at: ListAt = ListAt.Start;
  /**
   * Bytes not taken yet (from the start of the next step on) at `window[0, filled)`, then a NUL byte: a
   * scan that reaches the end of what has arrived stops there on a byte no JSON text holds, instead of
   * reading past the end of the buffer (V8 makes every later read of the scanner's functions slower
   * once one of them has read out of bounds). Items keep copies of their texts, so the window is reused.
   */
  private window: Buffer = Buffer.alloc(0);
  private filled = 0;
  /**
   * A step is tried once this many bytes after its start have arrived: twice the longest step taken or
   * tried so far. So the scan practically never stops at the end of what has arrived (which would cost
   * an exception, a scan again later, and slower code: V8 optimizes the scanner's functions for the
   * paths they have taken), and a step that does is tried again once the bytes waiting have doubled (a
   * long item arriving in small chunks is scanned O(its length) times in all, not once per chunk).
   */
  private ahead = 16 * 1024;
  /** What the step being tried found: its next place, and its value (set only when taken). */
  private next: ListAt = ListAt.Start;
  private key: string | undefined;
  private isItem = false;
  private value: unknown;

  constructor(keep?: KeepObject) {
    this.keep = keep;
  }

  /** More bytes of the response (the buffer may be reused once this returns). */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const needed = this.filled + chunk.length + 1;
    if (needed > this.window.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, 2 * this.window.length, 64 * 1024));
      this.window.copy(grown, 0, 0, this.filled);
      this.window = grown;
    }
    chunk.copy(this.window, this.filled);
    this.filled += chunk.length;
    if (this.filled >= this.ahead) this.run(false);
  }

  /** The list, once every byte has been pushed; throws when the text is not a JSON object. */
  end(): Record<string, unknown> {
    if (this.window.length === 0) this.window = Buffer.alloc(1);
    this.run(true);
    this.window = Buffer.alloc(0);
    return this.list;
  }

  private run(final: boolean): void {
    const length = this.filled;
    this.window[length] = 0;
    const b = this.window.subarray(0, length + 1);
    let pos = 0;
    for (;;) {
      if (final && pos >= length && this.at === ListAt.Done) return;
      // Not tried with fewer than `ahead` bytes after its start: it would most likely stop at their end.
      if (!final && length - pos < this.ahead) break;
      this.key = undefined;
      this.isItem = false;
      let end: number;
      try {
        end = this.step(b, pos, length);
      } catch (error) {
        if (final) throw error;
        end = length;
      }
      // It stopped at the end, or read up to it (a number might go on): tried again once twice as many bytes wait.
      if (!final && end >= length) {
        this.ahead = Math.max(this.ahead, 2 * (length - pos));
        break;
      }
      // The next steps wait for twice the longest so far (an item) to have arrived.
      this.ahead = Math.max(this.ahead, 2 * (end - pos));
      this.take();
      pos = end;
    }
    this.window.copyWithin(0, pos, length);
    this.filled = length - pos;
  }

  /** Commits the step just tried. */
  private take(): void {
    const key = this.key;
    if (key !== undefined) {
      defineEager(this.list, key, this.value, undefined);
      this.key = undefined;
    } else if (this.isItem) this.items.push(this.value);
    this.value = undefined;
    this.at = this.next;
  }

  /**
   * Tries the step at `i` of the `length` bytes that have arrived (`b[length]` is the NUL byte): returns
   * the index after it, and leaves what it found for {@link take}; throws when it cannot be taken.
   */
  private step(b: Buffer, i: number, length: number): number {
    let j = skipSpace(b, i);
    const c = b[j];
    switch (this.at) {
      case ListAt.Start:
        if (c !== OPEN_BRACE) fail('expected an object', j);
        this.next = ListAt.FirstKey;
        return j + 1;
      case ListAt.FirstKey:
        if (c === CLOSE_BRACE) {
          this.next = ListAt.Done;
          return j + 1;
        }
        return this.member(b, j);
      case ListAt.Key:
        return this.member(b, j);
      case ListAt.FirstItem:
        if (c === CLOSE_BRACKET) {
          this.next = ListAt.AfterMember;
          return j + 1;
        }
        return this.item(b, j);
      case ListAt.Item:
        return this.item(b, j);
      case ListAt.AfterItem:
        if (c === COMMA) this.next = ListAt.Item;
        else if (c === CLOSE_BRACKET) this.next = ListAt.AfterMember;
        else fail('expected "," or "]"', j);
        return j + 1;
      case ListAt.AfterMember:
        if (c === COMMA) this.next = ListAt.Key;
        else if (c === CLOSE_BRACE) this.next = ListAt.Done;
        else fail('expected "," or "}"', j);
        return j + 1;
      case ListAt.Done:
        if (j < length) fail('unexpected text after the list', j);
        this.next = ListAt.Done;
        return j;
    }
  }

  /** A member of the list at `j` (its key): `"items": [` opens the items, any other value is parsed whole. */
  private member(b: Buffer, j: number): number {
    if (b[j] !== QUOTE) fail('expected a key', j);
    const keyEnd = stringEnd(b, j);
    const key = keyAt(b, j, keyEnd);
    let k = skipSpace(b, keyEnd);
    if (b[k] !== COLON) fail('expected ":"', k);
    k = skipSpace(b, k + 1);
    if (key === 'items' && b[k] === OPEN_BRACKET) {
      // A repeated key: the last one wins, as with JSON.parse.
      this.items = [];
      this.key = key;
      this.value = this.items;
      this.next = ListAt.FirstItem;
      return k + 1;
    }
    const stop = valueEnd(b, k, 1);
    this.key = key;
    this.value = JSON.parse(text(b, k, stop));
    this.next = ListAt.AfterMember;
    return stop;
  }

  /** An item at `j`: an object decoded lazily, anything else parsed. */
  private item(b: Buffer, j: number): number {
    this.next = ListAt.AfterItem;
    this.isItem = true;
    if (b[j] === OPEN_BRACE) {
      const item = lazyObjectAt(b, j, this.keep, 2);
      this.value = item.value;
      return item.end;
    }
    const stop = valueEnd(b, j, 2);
    this.value = JSON.parse(text(b, j, stop));
    return stop;
  }
}
