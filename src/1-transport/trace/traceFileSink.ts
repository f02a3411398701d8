/**
 * A trace writer's sink to a file: whole lines, encoded once into one buffer, one system call per burst (a turn of the
 * event loop, or a full buffer).
 */
import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { describeThrown } from '../../0-model/errors.ts';
import {
  BUFFER_BYTES,
  initialSink,
  onlyBuffered,
  PIPE_QUEUE_BYTES,
  sinkKind,
  sinkStep,
  type SinkEffect,
  type SinkInput,
  type SinkState,
} from './sinkStep.ts';

export { PIPE_QUEUE_BYTES };

/** A file a {@link traceWriter} writes to: its `write` and `writeParts` are the writer's options of those names. */
export interface TraceFileSink {
  /**
   * Takes one whole line. The lines taken within one turn of the event loop (e.g. the events of every chunk of a watch
   * stream read in one go) are written together, whole, at its end (`setImmediate`), or as soon as the buffer
   * (256 KiB) cannot take the next line. Throws what a previous write threw (the writer then stops, `closed`).
   */
  write(text: string): void;
  /** {@link TraceFileSink.write} for a line in parts (the line is their concatenation), not joined first. */
  writeParts(parts: readonly string[]): void;
  /** Writes the lines taken so far, now. Throws what writing them (or a previous write) threw. */
  flush(): void;
  /** Flushes and closes the file. Idempotent; throws what the last writes threw. */
  close(): void;
  /**
   * Bytes in the file: whole lines, written. After a failed write (a full disk: `ENOSPC`, `EFBIG`), the file is cut
   * back to the last whole line written (a regular file: a pipe keeps what it took), and this is its length.
   */
  readonly bytes: number;
  /**
   * Resolves once what was taken is written and the file closed, or cannot be (a failure: see `onError`). A regular
   * file is written by `close()` itself; a pipe whose reader is slow still takes what is queued for it after `close()`
   * (see {@link TraceFileOptions.onError} and {@link PIPE_QUEUE_BYTES}).
   */
  drained(): Promise<void>;
}

export interface TraceFileOptions {
  /**
   * The file's permission bits, set whether it is created or was there (e.g. `0o600` for a trace holding Secret
   * values in clear, as `rx-informer record --no-redact` writes). Default: a new file gets 0o666 less the umask, an
   * existing one keeps its own. Set on a regular file only: a device or a FIFO (`/dev/null`, a pipe) is written to
   * as it is, its mode left alone (it is not ours: `/dev/null` made 0600 would be the whole machine's).
   */
  readonly mode?: number;
  /**
   * Told of a write that failed with no call to throw it to: one at the end of a turn (`setImmediate`), or to a pipe's
   * reader later. Without it, a quiet trace (nothing more to write) would sit on a failed file for good; the next
   * call throws it all the same. Called once; what it throws is ignored.
   */
  readonly onError?: (error: unknown) => void;
}

/**
 * Opens `path` for a trace (`w`: created or emptied) and returns its sink: every line is written whole, so
 * a process that ends between two bursts (a crash) leaves a file that reads; one that ends within a burst loses that
 * burst's lines (at most a turn of the event loop's, at most the buffer's), never a part of one. `close()` writes what
 * is pending first: a signal's handler that closes the sink (as `rx-informer record`'s does) loses nothing. A write
 * that fails part way (a full disk: `ENOSPC`, `EFBIG`) cuts the file back to the last whole line it took: the file
 * reads, without a stop line, and every later call throws the failure (one at the end of a turn is told to `onError`
 * at once: no later call may come). A FIFO or a pipe is written by the event loop through a `net.Socket`, never
 * blocking: its reader may stop reading, and a blocking write would hold the thread, deaf to signals. A burst is
 * a turn of the event loop rather than a synchronous run so that a watch stream read faster than it arrives (the
 * chunks of a turn: up to 32 reads of 64 KiB) is written in writes of the buffer's size, not one a chunk: writing
 * to the file, the kernel's part, is most of what recording a watch costs (docs/performance.md).
 *
 * ```ts
 * const file = traceFileSink('trace.jsonl');
 * const writer = traceWriter({ write: (line) => file.write(line), writeParts: (parts) => file.writeParts(parts), resources: ['pods'] });
 * // … later: writer.close(); file.close();
 * ```
 */
export function traceFileSink(path: string, options: TraceFileOptions = {}): TraceFileSink {
  return new FileSink(path, options);
}

/** The shell of {@link sinkStep}: the file's descriptor, its buffer, and each effect carried out. */
class FileSink implements TraceFileSink {
  private readonly fd: number;
  /** A pipe (a FIFO, `/dev/stdout` into a pipe) or a socket: written by the event loop, never blocking the thread. */
  private readonly pipe: Socket | undefined;
  private readonly buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private state: SinkState;
  private used = 0;
  private whole = 0;
  private failure: unknown;
  private scheduled: NodeJS.Immediate | undefined;
  private released = false;
  private done: () => void = () => undefined;
  private readonly whenDrained = new Promise<void>((resolve) => (this.done = resolve));

  private readonly path: string;
  private readonly options: TraceFileOptions;

  constructor(path: string, options: TraceFileOptions) {
    this.path = path;
    this.options = options;
    this.fd = openSync(path, openFlags(path), options.mode ?? 0o666);
    const kind = sinkKind(fstatSync(this.fd));
    // An existing file keeps its mode when opened: one asked for is set on it too (on a file: never on a device).
    if (options.mode !== undefined && kind === 'file') fchmodSync(this.fd, options.mode);
    this.pipe = kind === 'pipe' ? new Socket({ fd: this.fd, readable: false, writable: true }) : undefined;
    this.state = initialSink(kind);
    this.pipe?.on('error', (error) => this.run({ type: 'pipeError' }, error));
    this.pipe?.on('close', () => this.done());
  }

  write(text: string): void {
    // The common line (see `onlyBuffered`): encoded at once, no step asked, no object made.
    if (onlyBuffered(this.state, text.length, this.used)) this.used += this.buffer.write(text, this.used, 'utf8');
    else this.run({ type: 'line', units: text.length, used: this.used }, undefined, text);
  }

  writeParts(parts: readonly string[]): void {
    // Encoded one after the other into the buffer when the whole line fits, else into one of the line's size (a
    // list page's line): never joined into one string first.
    let units = 0;
    for (const part of parts) units += part.length;
    if (onlyBuffered(this.state, units, this.used)) for (const part of parts) this.used += this.buffer.write(part, this.used, 'utf8');
    else this.run({ type: 'line', units, used: this.used }, undefined, parts);
  }

  flush(): void {
    this.run({ type: 'flush' });
  }

  get bytes(): number {
    return this.whole;
  }

  /** Close's `release` is carried out even when an effect before it throws. */
  close(): void {
    try {
      this.run({ type: 'close' });
    } catch (error) {
      if (!this.state.open && !this.released) this.release();
      throw error;
    }
  }

  drained(): Promise<void> {
    return this.whenDrained;
  }

  /**
   * Carries out one step's effects, in order. `error` is what the input came with (a write's or a pipe's failure),
   * `line` what a `buffer` or `direct` effect writes, `at` how much of a failed write went through.
   */
  private run(input: SinkInput, error?: unknown, line?: Line, at = 0): void {
    const step = sinkStep(this.state, input);
    this.state = step.state;
    for (const effect of step.effects) {
      if (effect.type === 'release') return this.release();
      this.effect(effect, error, line, at);
    }
  }

  /** One effect of a step (`release` aside: it ends a run, whatever the effects before it threw). */
  private effect(effect: Exclude<SinkEffect, { type: 'release' }>, error: unknown, line: Line | undefined, at: number): void {
    switch (effect.type) {
      case 'throw':
        throw this.failure;
      case 'throwClosed':
        throw new Error(`trace file ${this.path} is closed`);
      case 'throwQueueFull':
        this.failure = new Error(
          `the reader of ${this.path} stopped reading: ${effect.waiting} bytes would be waiting for it, more than the ${PIPE_QUEUE_BYTES} held`,
        );
        throw this.failure;
      case 'schedule':
        this.scheduled = setImmediate(this.later);
        return;
      case 'cancel':
        clearImmediate(this.scheduled);
        this.scheduled = undefined;
        return;
      case 'buffer':
        if (typeof line === 'string') this.used += this.buffer.write(line, this.used, 'utf8');
        else for (const part of line as readonly string[]) this.used += this.buffer.write(part, this.used, 'utf8');
        return;
      case 'direct': {
        // A line that may never fit the buffer: encoded into one of its own size (a list page's line), never joined.
        const bytes = encodeLine(line as string | readonly string[]);
        return this.out(bytes, bytes.length);
      }
      case 'writeBuffer': {
        const length = this.used;
        this.used = 0;
        if (length > 0) this.out(this.buffer, length);
        return;
      }
      case 'hold':
        this.failure ??= error;
        return;
      case 'cutBack':
        // The last whole line the failed write took, or none of it.
        return this.cutBack(at > 0 ? this.whole + (line as Uint8Array).lastIndexOf(0x0a, at - 1) + 1 : this.whole);
      case 'tell':
        return tellOwner(this.options.onError, this.failure);
    }
  }

  /**
   * The descriptor closed, or (a pipe) ended: a pipe's reader may still be taking what is queued, its descriptor is
   * closed once it has (`drained`).
   */
  private release(): void {
    if (this.released) return;
    this.released = true;
    if (this.pipe) this.pipe.end();
    else {
      closeSync(this.fd);
      this.done();
    }
  }

  /** Writes `length` bytes of whole lines; on a failure, cuts the file back to the last whole line it took. */
  private out(bytes: Uint8Array, length: number): void {
    if (this.pipe) {
      // A copy (the buffer is reused) queued for its reader, up to PIPE_QUEUE_BYTES not yet taken.
      this.run({ type: 'queue', waiting: this.pipe.writableLength + length });
      this.pipe.write(Buffer.from(bytes.subarray(0, length)), (error) => error || (this.whole += length));
      return;
    }
    let at = 0;
    try {
      // A file descriptor may take less than asked in one call (a disk filling up takes part, then fails).
      while (at < length) at += writeSync(this.fd, bytes, at, length - at);
      this.whole += length;
    } catch (error) {
      this.run({ type: 'failed' }, error, bytes, at);
    }
  }

  /** The file ends at `length`, after a whole line (or is empty): a trace that reads, however the write failed. */
  private cutBack(length: number): void {
    try {
      ftruncateSync(this.fd, length);
      this.whole = length;
    } catch (error) {
      // The file keeps a line cut short: said with the write's failure, which is what is thrown.
      this.failure = new AggregateError(
        [this.failure, error],
        `${describeThrown(this.failure)}; and cutting ${this.path} back to its last whole line failed: ${describeThrown(error)}`,
      );
    }
  }

  /** The end of a turn: the lines taken in it written together. */
  private readonly later = () => {
    this.scheduled = undefined;
    try {
      this.run({ type: 'turnEnd' });
    } catch {
      // Kept in `failure`: the next write, flush or close throws it; told now, in case no call comes (a quiet trace).
      this.run({ type: 'untold' });
    }
  };
}

/** Tells the owner of a failure; what its callback throws is not the file's failure. */
function tellOwner(onError: ((error: unknown) => void) | undefined, failure: unknown): void {
  try {
    onError?.(failure);
  } catch {
    // The owner's callback: its failure is not the file's.
  }
}

/** A line, or its parts one after the other, encoded into a buffer of its size. */
function encodeLine(line: string | readonly string[]): Buffer {
  if (typeof line === 'string') return Buffer.from(line, 'utf8');
  let size = 0;
  for (const part of line) size += Buffer.byteLength(part, 'utf8');
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const part of line) at += bytes.write(part, at, 'utf8');
  return bytes;
}

/** A line as taken: a string, its parts, or (a failed write's) the bytes written. */
type Line = string | readonly string[] | Uint8Array;

/**
 * `w` (created or emptied) for a regular file or a new one; for a FIFO, a pipe's `/dev/stdout` or a socket that is
 * there, write-only and non-blocking (the event loop writes it: a reader that stops reading never holds the thread).
 */
function openFlags(path: string): number | string {
  try {
    if (sinkKind(statSync(path)) === 'pipe') return constants.O_WRONLY | constants.O_NONBLOCK;
  } catch {
    // Not there (or not to be looked at): opened as a file, which says why it cannot be.
  }
  return 'w';
}
