import { PendingBytes } from '../chunks.ts';

/**
 * Splits a protobuf watch body into its frames, incrementally: each frame is a 4-byte big-endian length, then that
 * many bytes (a WatchEvent). The length is read first: a frame over `maxFrameBytes` is reported before any of it is
 * buffered, and the stream cannot go on (there is no newline to find the next frame by), so the splitter stops.
 */

/** What {@link FrameSplitter.push} reports. */
export interface FrameSink {
  /** One frame, without its length. The buffer may be a view of the input chunk: valid during the call only. */
  frame(bytes: Buffer): void;
  /** A frame's length passed the limit (reported once; the splitter reads nothing more). */
  oversize(bytes: number): void;
}

export class FrameSplitter {
  private readonly maxFrameBytes: number;
  /** The bytes of the unfinished length or frame, copied as they arrive (one buffer, not a Buffer a chunk). */
  private readonly pending: PendingBytes;
  /** The length of the frame being gathered, once its 4 bytes have arrived. */
  private length = -1;
  private stopped = false;

  constructor(maxFrameBytes: number) {
    this.maxFrameBytes = maxFrameBytes;
    this.pending = new PendingBytes(maxFrameBytes);
  }

  /** Bytes of an unfinished frame (its length included), if any: a stream that ended mid-frame. */
  get leftoverBytes(): number {
    return this.stopped ? 0 : this.pending.length + (this.length >= 0 ? 4 : 0);
  }

  push(chunk: Buffer, sink: FrameSink): void {
    let at = 0;
    while (!this.stopped && at < chunk.length) {
      if (this.length < 0) {
        const need = 4 - this.pending.length;
        if (chunk.length - at < need) return this.pending.append(chunk, at);
        this.length = this.take(chunk, at, need).readUInt32BE(0);
        at += need;
        if (this.length > this.maxFrameBytes) {
          this.stopped = true;
          return sink.oversize(this.length);
        }
      }
      const need = this.length - this.pending.length;
      if (chunk.length - at < need) return this.pending.append(chunk, at);
      const frame = this.take(chunk, at, need);
      at += need;
      this.length = -1;
      sink.frame(frame);
    }
  }

  /** The pending bytes and `chunk[at, at + need)` as one buffer, pending cleared (a view, valid until the next push). */
  private take(chunk: Buffer, at: number, need: number): Buffer {
    if (this.pending.length === 0) return chunk.subarray(at, at + need);
    this.pending.append(chunk, at, at + need);
    const whole = this.pending.view();
    this.pending.clear();
    return whole;
  }
}
