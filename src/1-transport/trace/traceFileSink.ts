/**
 * A trace writer's sink to a file: whole lines, encoded once into one buffer, one system call per burst (a turn of the
 * event loop, or a full buffer).
 */
import { closeSync, fchmodSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { describeThrown } from '../../0-model/errors.ts';

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
}

/**
 * The buffer lines are encoded into: fuller than this less a line, it is written out. It bounds what is held: a slow
 * disk blocks the taker in `writeSync` (the informer waits), it never queues.
 */
const BUFFER_BYTES = 256 * 1024;

export interface TraceFileOptions {
  /**
   * The file's permission bits, set whether it is created or was there (e.g. `0o600` for a trace holding Secret
   * values in clear, as `rx-informer record --no-redact` writes). Default: a new file gets 0o666 less the umask, an
   * existing one keeps its own. Set on a regular file only: a device or a FIFO (`/dev/null`, a pipe) is written to
   * as it is, its mode left alone (it is not ours: `/dev/null` made 0600 would be the whole machine's).
   */
  readonly mode?: number;
}

/**
 * Opens `path` for a trace (`w`: created or emptied) and returns its sink: every line is written whole, so
 * a process that ends between two bursts (a crash) leaves a file that reads; one that ends within a burst loses that
 * burst's lines (at most a turn of the event loop's, at most the buffer's), never a part of one. `close()` writes what
 * is pending first: a signal's handler that closes the sink (as `rx-informer record`'s does) loses nothing. A write
 * that fails part way (a full disk: `ENOSPC`, `EFBIG`) cuts the file back to the last whole line it took: the file
 * reads, without a stop line, and every later call throws the failure. A burst is
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
  const fd = openSync(path, 'w', options.mode ?? 0o666);
  const regular = fstatSync(fd).isFile();
  // An existing file keeps its mode when opened: one asked for is set on it too (on a file: never on a device).
  if (options.mode !== undefined && regular) fchmodSync(fd, options.mode);
  const buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  let used = 0;
  let whole = 0;
  let failure: unknown;
  let open = true;
  let scheduled: NodeJS.Immediate | undefined;

  /** Writes `length` bytes of whole lines; on a failure, cuts the file back to the last whole line it took. */
  const out = (bytes: Uint8Array, length: number) => {
    let at = 0;
    try {
      // A file descriptor may take less than asked in one call (a disk filling up takes part, then fails).
      while (at < length) at += writeSync(fd, bytes, at, length - at);
      whole += length;
    } catch (error) {
      failure = error;
      if (regular) cutBack(at > 0 ? whole + bytes.lastIndexOf(0x0a, at - 1) + 1 : whole);
      throw failure;
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
  const flush = () => {
    if (failure !== undefined) throw failure;
    const length = used;
    used = 0;
    if (length > 0) out(buffer, length);
  };
  const later = () => {
    scheduled = undefined;
    try {
      flush();
    } catch {
      // Kept in `failure`: the next write, flush or close throws it.
    }
  };
  /** Room for a line of `units` UTF-16 units (at most 3 bytes each), or false when it may not fit the buffer. */
  const room = (units: number): boolean => {
    if (failure !== undefined) throw failure;
    if (!open) throw new Error(`trace file ${path} is closed`);
    scheduled ??= setImmediate(later);
    if (used + 3 * units <= BUFFER_BYTES) return true;
    flush();
    return 3 * units <= BUFFER_BYTES;
  };
  const take = (text: string) => {
    if (room(text.length)) used += buffer.write(text, used, 'utf8');
    else {
      const bytes = Buffer.from(text, 'utf8');
      out(bytes, bytes.length);
    }
  };

  return {
    write: take,
    writeParts(parts) {
      // Encoded one after the other into the buffer when the whole line fits, else into one of the line's size (a
      // list page's line): never joined into one string first.
      let units = 0;
      for (const part of parts) units += part.length;
      if (room(units)) {
        for (const part of parts) used += buffer.write(part, used, 'utf8');
        return;
      }
      let size = 0;
      for (const part of parts) size += Buffer.byteLength(part, 'utf8');
      const line = Buffer.allocUnsafe(size);
      let at = 0;
      for (const part of parts) at += line.write(part, at, 'utf8');
      out(line, at);
    },
    flush,
    get bytes() {
      return whole;
    },
    close() {
      if (!open) return;
      open = false;
      if (scheduled) clearImmediate(scheduled);
      scheduled = undefined;
      try {
        flush();
      } finally {
        closeSync(fd);
      }
    },
  };
}
