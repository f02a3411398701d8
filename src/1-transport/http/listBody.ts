import { StringDecoder } from 'node:string_decoder';
import type { KeepObject } from '../lazyJson.ts';
import { LazyListReader } from '../lazyList.ts';
import {
  decodeListBody,
  decodeListField,
  fieldHeader,
  listFields,
  listHead,
  type ListFields,
  type ListHead,
  trailerFieldsRead,
} from '../protobuf/decode.ts';
import type { BodySink } from './body.ts';

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
}

/**
 * The list body decoder for the transport's options and the response's encoding: protobuf (lazily, with `keep`),
 * or JSON lazily (with `keep`, see {@link KeepObject}) or with JSON.parse.
 */
export function listBodyDecoder(lazy: boolean, keep?: KeepObject, protobuf = false): ListBodyDecoder {
  return protobuf ? new ProtobufListBody(keep) : lazy ? new LazyListBody(keep) : new ListText();
}

/** Bytes a list field's header (tag and length, two varints) takes at most. */
const HEADER_BYTES = 20;
/** Bytes gathered before the list's head (`k8s\0`, typeMeta, raw's tag and length) is read. */
const HEAD_BYTES = 256;

/**
 * A protobuf list body (`k8s\0` + runtime.Unknown{typeMeta, raw: the list}) decoded as it arrives: once its head
 * is read, each field of raw (the ListMeta, an item) is decoded from the chunk it arrived in, in place, or from a
 * copy of its own bytes when it straddles chunks, so that no page is ever joined into one buffer (issue #36: a
 * dropped object costs its identity, not a share of a page-sized copy; the copies were most of what drives the
 * collector during a sync, docs/performance.md). The chunks are kept (references, within the page's byte limit)
 * until the end: a body read in an order other than a server's (raw before typeMeta), or with a fault anywhere, is
 * decoded whole at the end by `decodeListBody`, which then decides, exactly as without streaming. Throws a
 * `ProtobufError`.
 */
class ProtobufListBody implements ListBodyDecoder {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private readonly keep: KeepObject | undefined;
  /** Set once the head is read; undefined while it is not, or for good once the body must be decoded whole. */
  private list: { head: ListHead; fields: ListFields; value: Record<string, unknown>; items: unknown[] } | undefined;
  private whole = false;
  /** The bytes not decoded yet: `parts[0]` from `offset`, then the rest of `parts`; `available` of them. */
  private parts: Buffer[] = [];
  private offset = 0;
  private available = 0;
  /** raw's bytes not yet decoded (those in `parts` included). */
  private rawLeft = 0;

  constructor(keep: KeepObject | undefined) {
    this.keep = keep;
  }

  chunk(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.bytes += bytes.length;
    if (this.whole) return;
    this.parts.push(bytes);
    this.available += bytes.length;
    try {
      if (this.list === undefined && !this.readHead()) return;
      this.readFields();
    } catch {
      this.whole = true; // decoded whole at the end, which reports the fault as it would have
    }
  }

  end(): void {}

  value(): unknown {
    const chunks = this.chunks;
    this.chunks = []; // held no longer than needed, whoever holds the decoder
    const list = this.list;
    const streamed = !this.whole && list !== undefined && this.rawLeft === 0 && this.trailerReads();
    this.parts = [];
    this.list = undefined;
    if (streamed) {
      list.value.items = list.items;
      return list.value;
    }
    return decodeListBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.bytes), this.keep);
  }

  /** Reads the head once HEAD_BYTES have arrived: false while waiting; throws when the body is to be decoded whole. */
  private readHead(): boolean {
    if (this.available < HEAD_BYTES) return false;
    const first = this.parts[0]!.length >= HEAD_BYTES ? this.parts[0]! : this.join(this.available);
    const head = listHead(first);
    const fields = head === undefined ? undefined : listFields(head.kind);
    if (head === undefined || fields === undefined) throw new Error('decoded whole');
    this.list = { head, fields, value: { apiVersion: head.apiVersion, kind: head.kind, metadata: {}, items: [] }, items: [] };
    this.rawLeft = head.rawLength;
    this.offset = head.rawStart;
    this.available -= head.rawStart;
    return true;
  }

  /** Decodes every whole field of raw that has arrived. */
  private readFields(): void {
    const list = this.list!;
    while (this.rawLeft > 0) {
      if (this.available < Math.min(HEADER_BYTES, this.rawLeft)) return;
      if (this.parts[0]!.length - this.offset < Math.min(HEADER_BYTES, this.rawLeft)) this.join(this.available); // rare: a header across chunks
      const head = this.parts[0]!;
      const header = fieldHeader(head, this.offset);
      if (header === undefined) throw new Error('decoded whole'); // not a length-delimited field: left to decodeListBody
      const size = header.end - this.offset;
      if (size > this.rawLeft) throw new Error('decoded whole');
      if (size > this.available) return; // its bytes have not all arrived
      if (header.end <= head.length) {
        decodeListField(list.value, list.items, list.fields, header.tag, head, header.start, header.end, this.keep);
        this.consume(size);
      } else {
        const start = header.start - this.offset;
        const own = this.copy(size);
        decodeListField(list.value, list.items, list.fields, header.tag, own, start, own.length, this.keep);
      }
      this.rawLeft -= size;
    }
  }

  /** Joins the first `length` bytes not decoded into `parts[0]` (from offset 0), the rest after it. */
  private join(length: number): Buffer {
    const joined = this.copy(length);
    this.parts.unshift(joined);
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

  private consume(n: number): void {
    this.offset += n;
    this.available -= n;
    if (this.offset === this.parts[0]!.length) {
      this.parts.shift();
      this.offset = 0;
    }
  }

  /** Whether what follows raw (the Unknown's contentEncoding and contentType, empty from a server) reads. */
  private trailerReads(): boolean {
    return this.available === 0 || trailerFieldsRead(this.copy(this.available));
  }
}

/** The body as text, decoded piece by piece, parsed once at the end. */
class ListText implements ListBodyDecoder {
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private waiting: Buffer[] = [];
  private waitingBytes = 0;

  chunk(bytes: Buffer): void {
    this.waiting.push(bytes);
    this.waitingBytes += bytes.length;
    if (this.waitingBytes >= PIECE_BYTES) this.decode();
  }

  end(): void {
    this.decode();
    this.text += this.decoder.end();
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
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(keep: KeepObject | undefined) {
    this.reader = new LazyListReader(keep);
  }

  chunk(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.bytes += bytes.length;
    this.reader.push(bytes);
  }

  end(): void {}

  value(): unknown {
    const chunks = this.chunks.splice(0); // held no longer than needed, whoever holds the decoder
    const reader = this.reader;
    this.reader = new LazyListReader();
    try {
      return reader.end();
    } catch {
      // Not swallowed: parsed again, so it is reported exactly as without lazy decoding.
      const text = new ListText();
      for (const chunk of chunks) text.chunk(chunk);
      text.end();
      return text.value();
    }
  }
}
