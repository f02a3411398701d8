import { StringDecoder } from 'node:string_decoder';
import { isNestingError } from '../jsonScanner.ts';
import type { KeepObject } from '../lazyJson.ts';
import { LazyListReader } from '../lazyList.ts';
import {
  decodeListBody,
  decodeListField,
  failRawPastEnd,
  listFieldAt,
  listFields,
  listHead,
  listTrailer,
  TooManyItems,
  type ListFields,
  type ListHead,
} from '../protobuf/decode.ts';
import type { BodySink } from './body.ts';
import { JsonListHead } from './listHead.ts';

// A list response decoded in pieces as it arrives (docs/performance.md, "Flat at any size").
//
// Read whole, a page of 500 pods is one 2.3 MB buffer and then one 2.3 MB string; Node keeps a
// decoded text of more than ~1 MB outside V8's heap (an external string), and JSON.parse of a
// text that long allocates what it builds straight into the old generation: a sync then runs
// several times more full collections (mark-compacts) than the same objects decoded from smaller
// texts. Here no page is held as one buffer: eagerly, every ≤ 64 KiB of bytes is decoded to a
// string as it arrives and the pieces are joined (V8 flattens the joined text in its own heap when
// JSON.parse reads it); lazily, each item is decoded from the chunk it arrived in (LazyListReader).

/** Bytes decoded to text at a time, at least (smaller chunks wait) and at most (a larger one is cut). */
const PIECE_BYTES = 64 * 1024;

/** A list body, fed as it arrives: {@link ListBodyDecoder.value} once it has all arrived. */
export interface ListBodyDecoder extends BodySink {
  /** The decoded body; throws (as JSON.parse would) when it is not JSON. */
  value(): unknown;
  /**
   * The list's `metadata.continue` once read, before the items (./prefetch.ts): the token, `''` when there is none to
   * read early, undefined while not known yet. A hint only: {@link value} is what the page is.
   */
  continueToken(): string | undefined;
  /** A protobuf list's: whether its items went past the decoder's `maxItems` (none past it was decoded). */
  pastMaxItems?(): boolean;
}

/**
 * The list body decoder for the transport's options and the response's encoding: protobuf (lazily, with `keep`; no
 * item past `maxItems` decoded: {@link TooManyItems}), or JSON lazily (with `keep`, see {@link KeepObject}) or with
 * JSON.parse.
 */
export function listBodyDecoder(lazy: boolean, keep?: KeepObject, protobuf = false, maxItems = Infinity): ListBodyDecoder {
  return protobuf ? new ProtobufListBody(keep, maxItems) : lazy ? new LazyListBody(keep) : new ListText();
}

/** Bytes a list field's header (tag and length, two varints) takes at most. */
const HEADER_BYTES = 20;
/** Bytes gathered before the list's head (`k8s\0`, typeMeta, raw's tag and length) is read. */
const HEAD_BYTES = 256;

/** A streaming list's head, and what is decoded of it so far. */
interface StreamedList {
  readonly head: ListHead;
  readonly fields: ListFields;
  readonly value: Record<string, unknown>;
  readonly items: unknown[];
  /** Where raw ends in the body. */
  readonly rawEnd: number;
}

/**
 * A protobuf list body (`k8s\0` + runtime.Unknown{typeMeta, raw: the list}) decoded as it arrives: once its head is
 * read, each field of raw (the ListMeta, an item) is decoded from the chunk it arrived in, in place, or from a copy of
 * its own bytes when it straddles chunks, so that no page is ever joined into one buffer (issue #36: a dropped object
 * costs its identity, not a share of a page-sized copy, docs/performance.md). Nor is a chunk kept once every field
 * it holds is decoded ({@link chunksDone}: the transport then frees its memory at once, rather than the collector).
 *
 * Whatever the bytes, the outcome is `decodeListBody`'s for the whole body, value or fault: a body whose first bytes
 * are a server's head (`k8s\0`, typeMeta, raw's tag and length) of a list kind the schema knows is decided here, a
 * fault anywhere reported as decodeListBody reports it (the same text, body offsets, and nothing of the page); the
 * first fault in raw is held until the body ends, as a fault in the envelope around it (raw cut short, the fields
 * after it) comes first. Any other body (another order, a kind that is not a list) is kept whole until it ends and
 * decoded by decodeListBody. Throws a `ProtobufError`.
 */
class ProtobufListBody implements ListBodyDecoder {
  private readonly keep: KeepObject | undefined;
  /** The chunks, while the body may have to be decoded whole: until its head is read, and for good if not a server's. */
  private chunks: Buffer[] | undefined = [];
  private bytes = 0;
  /** Set once a server's head is read: the body is then decoded as it arrives. */
  private list: StreamedList | undefined;
  /** Set once the head is read and is not a server's: the body is decoded whole once it ends. */
  private whole = false;
  /** The bytes not decoded yet: `parts[0]` from `offset`, then the rest of `parts`; `available` of them. */
  private parts: Buffer[] = [];
  private offset = 0;
  private available = 0;
  /** `parts[0]` when it is a copy of ours (the head gathered across chunks), not a chunk handed to us. */
  private own: Buffer | undefined;
  /** How many of the chunks handed to us (the first ones) we read no more. */
  private finished = 0;
  /** The first fault in raw, reported once the body has ended (unless the envelope's comes first). */
  private fault: { readonly error: unknown } | undefined;
  /** Copies of the bytes after raw. */
  private readonly trailer: Buffer[] = [];
  /** The list's continue token once its ListMeta (field 1 of a List, before the items) is decoded; `''` for none. */
  private token: string | undefined;

  private readonly maxItems: number;

  constructor(keep: KeepObject | undefined, maxItems: number) {
    this.keep = keep;
    this.maxItems = maxItems;
  }

  chunk(bytes: Buffer): void {
    this.bytes += bytes.length;
    this.chunks?.push(bytes);
    if (this.whole) return;
    this.parts.push(bytes);
    this.available += bytes.length;
    if (this.list === undefined && !this.readHead()) return;
    this.readFields();
  }

  end(): void {}

  continueToken(): string | undefined {
    return this.token;
  }

  /** How many of the chunks handed to it (the first ones) it reads no more: their memory may be freed. */
  chunksDone(): number {
    return this.list === undefined ? 0 : this.finished;
  }

  pastMaxItems(): boolean {
    return this.fault?.error instanceof TooManyItems;
  }

  value(): unknown {
    const { chunks, list } = this;
    this.chunks = undefined; // held no longer than needed, whoever holds the decoder
    this.parts = [];
    this.list = undefined;
    if (list === undefined) {
      return decodeListBody(chunks!.length === 1 ? chunks![0]! : Buffer.concat(chunks!, this.bytes), this.keep, this.maxItems);
    }
    if (this.bytes < list.rawEnd) failRawPastEnd(list.head, this.bytes);
    listTrailer(this.trailer.length === 1 ? this.trailer[0]! : Buffer.concat(this.trailer), list.rawEnd);
    if (this.fault !== undefined) throw this.fault.error;
    list.value.items = list.items;
    return list.value;
  }

  /**
   * Reads the head once HEAD_BYTES have arrived: false while waiting, or when the body is to be decoded whole (not a
   * server's head of a list kind: its chunks are then kept, and nothing else is done until it ends).
   */
  private readHead(): boolean {
    if (this.available < HEAD_BYTES) return false;
    const first = this.parts[0]!.length >= HEAD_BYTES ? this.parts[0]! : this.join(this.available);
    const head = listHead(first);
    const fields = head === undefined ? undefined : listFields(head.kind);
    if (head === undefined || fields === undefined) {
      this.whole = true;
      this.token = ''; // decoded whole at the end: nothing to read early
      this.parts = [];
      this.available = 0;
      return false;
    }
    const value = { kind: head.kind, apiVersion: head.apiVersion, metadata: {}, items: [] };
    this.list = { head, fields, value, items: [], rawEnd: head.rawStart + head.rawLength };
    this.chunks = undefined; // decided here, never decoded whole
    this.consume(head.rawStart);
    return true;
  }

  /** Decodes every whole field of raw that has arrived (after a fault: counts raw's bytes), then keeps what follows raw. */
  private readFields(): void {
    const list = this.list!;
    while (this.available > 0) {
      const at = this.bytes - this.available; // the body offset of the next byte
      const rawLeft = list.rawEnd - at;
      if (rawLeft <= 0) {
        this.trailer.push(this.copy(this.available));
        return;
      }
      if (this.fault !== undefined) {
        this.skip(Math.min(rawLeft, this.available));
        continue;
      }
      const need = Math.min(HEADER_BYTES, rawLeft);
      if (this.available < need) return;
      if (!this.readField(list, at, rawLeft, need)) return;
    }
  }

  /**
   * Reads the field at body offset `at` (`parts[0]` from `offset`), its header read in place or, across chunks, from a
   * copy of its `need` bytes: false when its bytes have not all arrived.
   */
  private readField(list: StreamedList, at: number, rawLeft: number, need: number): boolean {
    const inPlace = this.parts[0]!.length - this.offset >= need;
    const bytes = inPlace ? this.parts[0]! : this.peek(need);
    const from = inPlace ? at - this.offset : at;
    const first = inPlace ? this.offset : 0;
    try {
      const { tag, start, end } = listFieldAt(bytes, first, first + rawLeft, list.fields, from);
      const size = end - first;
      // At the item's header, as decodeListBody checks it: the fault is held (the rest of raw skipped, not decoded).
      if (tag === list.fields.itemsTag && list.items.length >= this.maxItems) throw new TooManyItems(this.maxItems);
      if (size > this.available) return false;
      if (tag !== list.fields.metaTag && tag !== list.fields.itemsTag) this.skip(size);
      else if (inPlace && end <= bytes.length) {
        decodeListField(list.value, list.items, list.fields, tag, bytes, start, end, this.keep, from);
        this.consume(size);
      } else {
        const own = this.copy(size);
        decodeListField(list.value, list.items, list.fields, tag, own, start - first, own.length, this.keep, at);
      }
      this.token ??= tag === list.fields.metaTag ? tokenOf(list.value.metadata) : tag === list.fields.itemsTag ? '' : undefined;
    } catch (error) {
      this.fault = { error }; // reported at the end, unless the envelope's fault comes first (as decodeListBody decides)
      this.token ??= '';
    }
    return true;
  }

  /** A copy of the next `size` bytes not decoded, left not decoded. */
  private peek(size: number): Buffer {
    const own = Buffer.allocUnsafe(size);
    let at = 0;
    for (let i = 0, offset = this.offset; at < size; i++, offset = 0) {
      const part = this.parts[i]!;
      at += part.copy(own, at, offset, Math.min(part.length, offset + size - at));
    }
    return own;
  }

  /** Joins the first `length` bytes not decoded into `parts[0]` (a copy of ours, from offset 0), the rest after it. */
  private join(length: number): Buffer {
    const joined = this.copy(length);
    this.parts.unshift(joined);
    this.own = joined;
    this.offset = 0;
    this.available += length;
    return joined;
  }

  /** A copy of the next `size` bytes not decoded, consumed. */
  private copy(size: number): Buffer {
    const own = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const part = this.parts[0]!;
      const n = Math.min(size - at, part.length - this.offset);
      part.copy(own, at, this.offset, this.offset + n);
      at += n;
      this.consume(n);
    }
    return own;
  }

  /** Passes over the next `size` bytes not decoded. */
  private skip(size: number): void {
    while (size > 0) {
      const n = Math.min(size, this.parts[0]!.length - this.offset);
      this.consume(n);
      size -= n;
    }
  }

  private consume(n: number): void {
    this.offset += n;
    this.available -= n;
    while (this.parts.length > 0 && this.offset === this.parts[0]!.length) {
      if (this.parts.shift() === this.own) this.own = undefined;
      else this.finished++;
      this.offset = 0;
    }
  }
}

/** A decoded ListMeta's `continue`, or `''`. */
function tokenOf(metadata: unknown): string {
  const token = typeof metadata === 'object' && metadata !== null ? (metadata as { continue?: unknown }).continue : undefined;
  return typeof token === 'string' ? token : '';
}

/** The body as text, decoded piece by piece, parsed once at the end. */
class ListText implements ListBodyDecoder {
  private readonly decoder = new StringDecoder('utf8');
  private readonly head = new JsonListHead();
  private text = '';
  private waiting: Buffer[] = [];
  private waitingBytes = 0;

  chunk(bytes: Buffer): void {
    this.head.push(bytes);
    this.waiting.push(bytes);
    this.waitingBytes += bytes.length;
    if (this.waitingBytes >= PIECE_BYTES) this.decode();
  }

  end(): void {
    this.decode();
    this.text += this.decoder.end();
  }

  continueToken(): string | undefined {
    return this.head.token;
  }

  value(): unknown {
    const text = this.text;
    this.text = ''; // held no longer than needed, whoever holds the decoder
    return JSON.parse(text);
  }

  private decode(): void {
    if (this.waitingBytes === 0) return;
    const bytes = this.waiting.length === 1 ? this.waiting[0]! : Buffer.concat(this.waiting, this.waitingBytes);
    this.waiting = [];
    this.waitingBytes = 0;
    // The decoder keeps a UTF-8 sequence cut at a piece's end for the next piece.
    for (let at = 0; at < bytes.length; at += PIECE_BYTES) this.text += this.decoder.write(bytes.subarray(at, at + PIECE_BYTES));
  }
}

/**
 * The body decoded lazily as it arrives. A body the lazy reader rejects is parsed again with
 * JSON.parse (its chunks are kept until the end), so that it is reported exactly as without lazy
 * decoding: a syntax error at the same position, or valid JSON that is not a list.
 */
class LazyListBody implements ListBodyDecoder {
  private reader: LazyListReader;
  private readonly head = new JsonListHead();
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(keep: KeepObject | undefined) {
    this.reader = new LazyListReader(keep);
  }

  chunk(bytes: Buffer): void {
    this.head.push(bytes);
    this.chunks.push(bytes);
    this.bytes += bytes.length;
    this.reader.push(bytes);
  }

  end(): void {}

  continueToken(): string | undefined {
    return this.head.token;
  }

  value(): unknown {
    const chunks = this.chunks.splice(0); // held no longer than needed, whoever holds the decoder
    const reader = this.reader;
    this.reader = new LazyListReader();
    try {
      return reader.end();
    } catch (error) {
      // Nested past what Go takes: refused (JSON.parse would take it; an eager page is not counted, docs/transport.md).
      if (isNestingError(error)) throw error;
      // Not swallowed: parsed again, so it is reported exactly as without lazy decoding.
      const text = new ListText();
      for (const chunk of chunks) text.chunk(chunk);
      text.end();
      return text.value();
    }
  }
}
