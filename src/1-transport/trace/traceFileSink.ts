/**
 * A trace writer's sink to a file: whole lines, encoded once into one buffer, one system call per burst (a turn of the
 * event loop, or a full buffer).
 */
import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { describeThrown } from '../../0-model/errors.ts';
import { BUFFER_BYTES, initialSink, onlyBuffered, PIPE_QUEUE_BYTES, sinkKind, sinkStep, type SinkInput } from './sinkStep.ts';

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
  const fd = openSync(path, openFlags(path), options.mode ?? 0o666);
  const kind = sinkKind(fstatSync(fd));
  // An existing file keeps its mode when opened: one asked for is set on it too (on a file: never on a device).
  if (options.mode !== undefined && kind === 'file') fchmodSync(fd, options.mode);
  // A pipe (a FIFO, `/dev/stdout` into a pipe) or a socket: written by the event loop, never blocking the thread.
  const pipe = kind === 'pipe' ? new Socket({ fd, readable: false, writable: true }) : undefined;
  const buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  let state = initialSink(kind);
  let used = 0;
  let whole = 0;
  let failure: unknown;
  let scheduled: NodeJS.Immediate | undefined;
  let done: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => (done = resolve));

  /**
   * Carries out one step's effects, in order. `error` is what the input came with (a write's or a pipe's failure),
   * `line` what a `buffer` or `direct` effect writes, `at` how much of a failed write went through.
   */
  const run = (input: SinkInput, error?: unknown, line?: Line, at = 0) => {
    const step = sinkStep(state, input);
    state = step.state;
    const { effects } = step;
    for (let i = 0; i < effects.length; i++) {
      const effect = effects[i]!;
      switch (effect.type) {
        case 'throw':
          throw failure;
        case 'throwClosed':
          throw new Error(`trace file ${path} is closed`);
        case 'throwQueueFull':
          failure = new Error(
            `the reader of ${path} stopped reading: ${effect.waiting} bytes would be waiting for it, more than the ${PIPE_QUEUE_BYTES} held`,
          );
          throw failure;
        case 'schedule':
          scheduled = setImmediate(later);
          break;
        case 'cancel':
          clearImmediate(scheduled);
          scheduled = undefined;
          break;
        case 'buffer':
          if (typeof line === 'string') used += buffer.write(line, used, 'utf8');
          else for (const part of line as readonly string[]) used += buffer.write(part, used, 'utf8');
          break;
        case 'direct':
          direct(line as string | readonly string[]);
          break;
        case 'writeBuffer': {
          const length = used;
          used = 0;
          if (length > 0) out(buffer, length);
          break;
        }
        case 'hold':
          failure ??= error;
          break;
        case 'cutBack':
          // The last whole line the failed write took, or none of it.
          cutBack(at > 0 ? whole + (line as Uint8Array).lastIndexOf(0x0a, at - 1) + 1 : whole);
          break;
        case 'tell':
          tellOwner(options.onError, failure);
          break;
        case 'release':
          // Whatever the effects before it threw (close's flush): a pipe's reader may still be taking what is queued,
          // its descriptor is closed once it has (`drained`).
          return release();
      }
    }
  };
  /** Runs `input`'s effects; close's `release` is carried out even when an effect before it throws. */
  const runClose = () => {
    try {
      run({ type: 'close' });
    } catch (error) {
      if (!state.open && !released) release();
      throw error;
    }
  };
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (pipe) pipe.end();
    else {
      closeSync(fd);
      done();
    }
  };
  pipe?.on('error', (error) => run({ type: 'pipeError' }, error));
  pipe?.on('close', () => done());
  /** Writes `length` bytes of whole lines; on a failure, cuts the file back to the last whole line it took. */
  const out = (bytes: Uint8Array, length: number) => {
    if (pipe) {
      // A copy (the buffer is reused) queued for its reader, up to PIPE_QUEUE_BYTES not yet taken.
      run({ type: 'queue', waiting: pipe.writableLength + length });
      pipe.write(Buffer.from(bytes.subarray(0, length)), (error) => error || (whole += length));
      return;
    }
    let at = 0;
    try {
      // A file descriptor may take less than asked in one call (a disk filling up takes part, then fails).
      while (at < length) at += writeSync(fd, bytes, at, length - at);
      whole += length;
    } catch (error) {
      run({ type: 'failed' }, error, bytes, at);
    }
  };
  /** The file ends at `length`, after a whole line (or is empty): a trace that reads, however the write failed. */
  const cutBack = (length: number) => {
    try {
      ftruncateSync(fd, length);
      whole = length;
    } catch (error) {
      // The file keeps a line cut short: said with the write's failure, which is what is thrown.
      failure = new AggregateError(
        [failure, error],
        `${describeThrown(failure)}; and cutting ${path} back to its last whole line failed: ${describeThrown(error)}`,
      );
    }
  };
  /** A line that may never fit the buffer: encoded into one of its own size (a list page's line), never joined. */
  const direct = (line: string | readonly string[]) => {
    const bytes = encodeLine(line);
    out(bytes, bytes.length);
  };
  const later = () => {
    scheduled = undefined;
    try {
      run({ type: 'turnEnd' });
    } catch {
      // Kept in `failure`: the next write, flush or close throws it; told now, in case no call comes (a quiet trace).
      run({ type: 'untold' });
    }
  };

  return {
    write(text) {
      // The common line (see `onlyBuffered`): encoded at once, no step asked, no object made.
      if (onlyBuffered(state, text.length, used)) used += buffer.write(text, used, 'utf8');
      else run({ type: 'line', units: text.length, used }, undefined, text);
    },
    writeParts(parts) {
      // Encoded one after the other into the buffer when the whole line fits, else into one of the line's size (a
      // list page's line): never joined into one string first.
      let units = 0;
      for (const part of parts) units += part.length;
      if (onlyBuffered(state, units, used)) for (const part of parts) used += buffer.write(part, used, 'utf8');
      else run({ type: 'line', units, used }, undefined, parts);
    },
    flush: () => run({ type: 'flush' }),
    get bytes() {
      return whole;
    },
    close: runClose,
    drained: () => drained,
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
