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
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The length of the frame being gathered, once its 4 bytes have arrived. */
  private length = -1;
  private stopped = false;

  constructor(maxFrameBytes: number) {
    this.maxFrameBytes = maxFrameBytes;
  }

  /** Bytes of an unfinished frame (its length included), if any: a stream that ended mid-frame. */
  get leftoverBytes(): number {
    return this.stopped ? 0 : this.pendingBytes + (this.length >= 0 ? 4 : 0);
  }

  push(chunk: Buffer, sink: FrameSink): void {
    let at = 0;
    while (!this.stopped && at < chunk.length) {
      if (this.length < 0) {
        const need = 4 - this.pendingBytes;
        if (chunk.length - at < need) return this.keep(chunk.subarray(at));
        const head =
          this.pendingBytes === 0 ? chunk.subarray(at, at + 4) : Buffer.concat([...this.pending, chunk.subarray(at, at + need)], 4);
        this.reset();
        at += need;
        this.length = head.readUInt32BE(0);
        if (this.length > this.maxFrameBytes) {
          this.stopped = true;
          return sink.oversize(this.length);
        }
      }
      const need = this.length - this.pendingBytes;
      if (chunk.length - at < need) return this.keep(chunk.subarray(at));
      const frame =
        this.pendingBytes === 0
          ? chunk.subarray(at, at + need)
          : Buffer.concat([...this.pending, chunk.subarray(at, at + need)], this.length);
      at += need;
      this.reset();
      this.length = -1;
      sink.frame(frame);
    }
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    // Copy: the chunk's memory may be reused by the stream after this call.
    this.pending.push(Buffer.from(bytes));
    this.pendingBytes += bytes.length;
  }

  private reset(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }
}
