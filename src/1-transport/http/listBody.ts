import { StringDecoder } from 'node:string_decoder';
import type { KeepObject } from '../lazyJson.ts';
import { LazyListReader } from '../lazyList.ts';
import { decodeListBody } from '../protobuf/decode.ts';
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

/**
 * A protobuf list body: its chunks kept (within the page's byte limit) and decoded at the end (`k8s\0` + a
 * runtime.Unknown holding the whole list cannot be read before its last byte). Throws a `ProtobufError`.
 */
class ProtobufListBody implements ListBodyDecoder {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private readonly keep: KeepObject | undefined;

  constructor(keep: KeepObject | undefined) {
    this.keep = keep;
  }

  chunk(bytes: Buffer): void {
    this.chunks.push(bytes);
    this.bytes += bytes.length;
  }

  end(): void {}

  value(): unknown {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes);
    this.chunks = []; // held no longer than needed, whoever holds the decoder
    return decodeListBody(body, this.keep);
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
