import { PendingBytes } from './chunks.ts';

const NEWLINE = 0x0a;

/** What {@link LineSplitter.push} reports for each piece of input: lines as text. */
export interface LineSink {
  /** One line, without its newline, decoded as UTF-8; `bytes`: its length in bytes. */
  line(text: string, bytes: number): void;
  /** A line passed the limit (reported once, as it does, even if it never ends); `bytes`: how much of it was seen. */
  oversize(bytes: number): void;
}

/** A {@link LineSink} that takes lines as bytes, never decoded by the splitter. */
export interface LineBytesSink {
  /**
   * One line, without its newline. The buffer may be a view of the input
   * chunk: it is valid during the call only (copy what must be kept).
   */
  lineBytes(line: Buffer): void;
  /** A line passed the limit (reported once, as it does, even if it never ends); `bytes`: how much of it was seen. */
  oversize(bytes: number): void;
}

/**
 * Splits a byte stream into newline-terminated lines, incrementally.
 *
 * Bytes are kept as bytes until a line is complete and only then decoded, so
 * a line split across chunks, and a multi-byte UTF-8 character split across
 * chunks, both come out whole. A line longer than `maxLineBytes` is not kept:
 * it is reported once through `oversize` as soon as it passes the limit (a
 * line that never ends is reported too), and its bytes are dropped as they
 * arrive, up to its newline (memory stays bounded). The bytes of a line that spans chunks are copied into one
 * buffer as they arrive ({@link PendingBytes}), so a peer that sends one byte per chunk costs its bytes only.
 */
export class LineSplitter {
  private readonly maxLineBytes: number;
  private readonly pending: PendingBytes;
  /** Bytes of the unfinished line: those in `pending`, or, while dropping, those seen. */
  private pendingBytes = 0;
  private dropping = false;

  constructor(maxLineBytes: number = 16 * 1024 * 1024) {
    this.maxLineBytes = maxLineBytes;
    this.pending = new PendingBytes(maxLineBytes);
  }

  push(chunk: Buffer, sink: LineSink | LineBytesSink): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) break;
      this.complete(chunk, start, nl, sink);
      start = nl + 1;
    }
    if (start < chunk.length) this.keep(chunk, start, sink);
  }

  /** Bytes of an unterminated last line, if any (a stream that ended mid-line). */
  get leftoverBytes(): number {
    return this.pendingBytes;
  }

  /** Forgets any partial line. */
  reset(): void {
    this.pending.clear();
    this.pendingBytes = 0;
    this.dropping = false;
  }

  private complete(chunk: Buffer, start: number, end: number, sink: LineSink | LineBytesSink): void {
    const total = this.pendingBytes + (end - start);
    if (this.dropping) {
      // Reported when it passed the limit.
      this.reset();
      return;
    }
    if (total > this.maxLineBytes) {
      this.reset();
      sink.oversize(total);
      return;
    }
    if (total === 0) return;
    // The line is chunk[from, to), or, when it began in earlier chunks, all its pieces joined.
    let line = chunk;
    let from = start;
    let to = end;
    if (this.pending.length > 0) {
      this.pending.append(chunk, start, end);
      line = this.pending.view(); // readable during the sink's call, as a view of the chunk would be
      from = 0;
      to = total;
      this.reset();
    }
    if ('lineBytes' in sink) sink.lineBytes(line.subarray(from, to));
    else sink.line(line.toString('utf8', from, to), to - from);
  }

  private keep(chunk: Buffer, start: number, sink: LineSink | LineBytesSink): void {
    const bytes = chunk.length - start;
    if (this.dropping) {
      this.pendingBytes += bytes;
      return;
    }
    if (this.pendingBytes + bytes > this.maxLineBytes) {
      this.pending.clear();
      this.dropping = true;
      this.pendingBytes += bytes;
      sink.oversize(this.pendingBytes);
      return;
    }
    this.pending.append(chunk, start);
    this.pendingBytes += bytes;
  }
}
