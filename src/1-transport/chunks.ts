// Bytes kept across chunks, at the cost of their bytes, not of a Buffer per chunk.
//
// A peer decides how its bytes are cut: a chunked HTTP/1.1 body of `1\r\nA\r\n…`, or HTTP/2 DATA frames of one
// byte, arrive as one `data` event (one Buffer, ~100 bytes of V8 and Node bookkeeping) per byte. Kept as a list of
// chunks, a 16 MiB line would then hold ~3 GB. What is kept across chunks is kept here instead: copied into one
// buffer ({@link PendingBytes}), or small chunks gathered into slabs ({@link ChunkGatherer}), so memory stays
// within about twice the bytes counted against a limit.

const EMPTY = Buffer.alloc(0);

/** A {@link PendingBytes} buffer up to this size is kept for the next line or frame; a larger one is let go. */
const RETAINED_BYTES = 64 * 1024;
/** The first buffer a {@link PendingBytes} allocates, at least. */
const FIRST_BYTES = 4 * 1024;

/**
 * The bytes of an unfinished line or frame, in one buffer that grows by doubling (never past `maxBytes`, unless
 * more is appended: callers check their limit first). {@link view} is valid until the next `append` or `clear`.
 */
export class PendingBytes {
  private buffer: Buffer = EMPTY;
  private used = 0;
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get length(): number {
    return this.used;
  }

  /** Appends `chunk[start, end)` (copied: the chunk may be reused by the stream after the call). */
  append(chunk: Buffer, start = 0, end = chunk.length): void {
    const need = this.used + (end - start);
    if (need > this.buffer.length) this.grow(need);
    chunk.copy(this.buffer, this.used, start, end);
    this.used = need;
  }

  /** The bytes appended since the last `clear`: a view, valid until the next `append`. */
  view(): Buffer {
    return this.buffer.subarray(0, this.used);
  }

  /** Forgets the bytes (a view taken before stays readable: the memory is written again only by a later append). */
  clear(): void {
    this.used = 0;
    if (this.buffer.length > RETAINED_BYTES) this.buffer = EMPTY;
  }

  private grow(need: number): void {
    const doubled = Math.min(Math.max(this.buffer.length * 2, FIRST_BYTES), this.maxBytes);
    const next = Buffer.allocUnsafe(Math.max(need, doubled));
    this.buffer.copy(next, 0, 0, this.used);
    this.buffer = next;
  }
}

/** Chunks at least this large are handed on as they are; smaller ones are gathered. */
const SMALL_BYTES = 4 * 1024;
/** The slab small chunks are gathered into. */
const SLAB_BYTES = 64 * 1024;

/**
 * Hands a body's chunks on to `out`, small ones (under 4 KiB) gathered into 64 KiB slabs first, for bodies whose
 * chunks are kept until the end (list pages). What `out` receives is never written again. Call {@link flush}
 * before the end of the body: it hands on what is gathered.
 */
export class ChunkGatherer {
  private slab: Buffer | undefined;
  private used = 0;
  private readonly out: (bytes: Buffer, slab: boolean) => void;

  /** `out` is told whether `bytes` is a slab (memory of the gatherer's own, which nothing else views) or not. */
  constructor(out: (bytes: Buffer, slab: boolean) => void) {
    this.out = out;
  }

  push(chunk: Buffer): void {
    if (chunk.length >= SMALL_BYTES) {
      this.flush();
      return this.out(chunk, false);
    }
    if (this.slab !== undefined && this.used + chunk.length > this.slab.length) this.flush();
    this.slab ??= Buffer.allocUnsafe(SLAB_BYTES);
    chunk.copy(this.slab, this.used);
    this.used += chunk.length;
  }

  flush(): void {
    if (this.used === 0) return;
    const slab = this.slab!;
    const used = this.used;
    this.used = 0;
    // A slab mostly empty is handed on as a copy of its bytes (a view would keep all 64 KiB) and gathers again.
    if (used * 2 < slab.length) return this.out(Buffer.from(slab.subarray(0, used)), false);
    this.slab = undefined;
    this.out(slab.subarray(0, used), true);
  }
}
