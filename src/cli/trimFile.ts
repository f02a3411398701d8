/**
 * `rx-informer trim`'s writing: the window of a trace written to a file a line at a time, never half of one; and
 * {@link trimInWorker}, the same in a worker thread that a signal can stop.
 */
import { closeSync, constants, openSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { writeTrimmedTrace, type TraceSource, type TrimWindow } from '../pipeline.ts';
import { traceLineText } from '../internal.ts';
import { messageOf } from './format.ts';
import { FIFO_RETRY_MS, tryOpenFifo } from '../1-transport/trace/fifo.ts';

export interface Trimmed {
  readonly lines: number;
  /** The window's last time (ms from its start). */
  readonly lastAt: number;
  readonly startedAt: string;
}

/** The file calls a cut writes with (Node's; a test injects failing ones). */
export interface TrimIo {
  /** Writes `bytes` from `at` on; returns how many it took (a pipe may take less than asked). */
  readonly write: (fd: number, bytes: Buffer, at: number) => number;
  readonly close: (fd: number) => void;
}

const NODE_IO: TrimIo = { write: (fd, bytes, at) => writeSync(fd, bytes, at), close: closeSync };

/** The file `out` names: through a symbolic link (the link stays, its target is written), else `out` itself. */
function target(out: string): string {
  try {
    return realpathSync(out);
  } catch {
    return out;
  }
}

/** The hidden temporary file {@link trimToFile} writes for `out`: beside the file `out` names. */
export function tempFileFor(out: string): string {
  const path = target(out);
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** What `out` names, when it is there and not a regular file: a FIFO (`/dev/stdout` into a pipe too), or another (a device). */
function specialFile(out: string): 'fifo' | 'other' | undefined {
  try {
    const stat = statSync(out);
    return stat.isFile() ? undefined : stat.isFIFO() ? 'fifo' : 'other';
  } catch {
    return undefined;
  }
}

/** Waits `ms` on this thread (a worker's: its termination ends the wait). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Opens a FIFO to write without blocking in `open`, where a FIFO without a reader would hold the thread for good
 * and a stop could not end it: while it has none (ENXIO), `waiting` is told once and the open is tried again every
 * {@link FIFO_RETRY_MS}. The descriptor stays non-blocking: a write to a full pipe is tried again likewise ({@link trimInto}).
 */
function openFifo(out: string, waiting: () => void): number {
  for (let told = false; ; pause(FIFO_RETRY_MS)) {
    const fd = tryOpenFifo(out);
    if (fd !== undefined) return fd;
    if (!told) waiting();
    told = true;
  }
}

/** How {@link trimToFile} writes, besides the window: all optional. */
export interface TrimToFileOptions {
  /** The temporary file written, then renamed onto `out`; default {@link tempFileFor}'s. */
  readonly temp?: string;
  /** The write and close calls (a test injects failing ones); default Node's. */
  readonly io?: TrimIo;
  /** Told once when `out` is a FIFO without a reader: the cut waits for one (and a stop ends the wait). */
  readonly waiting?: () => void;
}

/**
 * Writes the window of `source` to `out` as it is read (see `writeTrimmedTrace`): into a temporary file beside it
 * (`temp`), renamed onto `out` once whole. So `out` may be the trace itself (or a link to it: the trace is read to
 * the end before the rename), and a cut that fails part way (a line that cannot be read, a write or a close that
 * fails) removes the temporary file, then throws: `out` is as it was, and no file cut short is left that would still
 * read as a trace. A new file is its owner's only (mode 0600, as `record` writes one: a redacted trace still holds
 * the cluster's other objects whole); a file replaced keeps its permissions, but for a trace whose header says
 * `redacted: false` (recorded with `--no-redact`: Secret values in clear): it loses its group's and others' bits.
 * An `out` that is there and not a regular file (`/dev/stdout`, a FIFO, a device) is written to as it is, a line at a
 * time: no temporary file, its mode left alone; a FIFO without a reader is waited for (`options.waiting` is told),
 * without blocking the thread in `open` or in a write.
 */
export function trimToFile(source: TraceSource, window: TrimWindow, out: string, options: TrimToFileOptions = {}): Trimmed {
  const { temp = tempFileFor(out), io = NODE_IO, waiting = () => undefined } = options;
  const special = specialFile(out);
  if (special === 'fifo') return trimInto(source, window, out, () => openFifo(out, waiting), io);
  if (special === 'other') return trimInto(source, window, out, () => openSync(out, 'w'), io);
  const path = target(out);
  const mode = modeOf(path, 0o600) & (source.header.redacted ? 0o777 : 0o700);
  try {
    const trimmed = trimInto(source, window, out, () => openSync(temp, 'wx', mode), io);
    // Nothing written, nothing opened: `out` as it was.
    if (trimmed.lines > 0) writing(out, () => renameSync(temp, path));
    return trimmed;
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** A failure of writing `-o`'s file (a full disk, a directory), not of reading the trace: `file` names it. */
export class OutputError extends Error {
  readonly file: string;
  constructor(file: string, cause: unknown) {
    super(messageOf(cause), { cause });
    this.file = file;
  }
}

/** `run`, a step of writing `out`: what it throws is an {@link OutputError}. */
function writing<T>(out: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new OutputError(out, error);
  }
}

/**
 * Writes the window into the file `open` opens for its first line, and closes it, whether the cut ends whole or not.
 * `out`: the file named on the command line, which a failure to open, write or close is about. The first failure is
 * the one thrown: a close that fails after a write (or a read of the trace) failed is not what went wrong.
 */
function trimInto(source: TraceSource, window: TrimWindow, out: string, open: () => number, io: TrimIo): Trimmed {
  let fd: number | undefined;
  let lines = 0;
  let lastAt = 0;
  let startedAt = '';
  const close = () => {
    const opened = fd;
    fd = undefined;
    if (opened !== undefined) writing(out, () => io.close(opened));
  };
  try {
    writeTrimmedTrace(source, window, (line) => {
      const to = (fd ??= writing(out, open));
      const bytes = Buffer.from(traceLineText(line), 'utf8');
      writing(out, () => {
        for (let at = 0; at < bytes.length;) at += writeSome(io, to, bytes, at);
      });
      lines++;
      if (line.type === 'header') startedAt = line.startedAt;
      else lastAt = line.at;
    });
  } catch (error) {
    try {
      close();
    } catch {
      // The descriptor is released either way; the error that ended the cut is the one to tell.
    }
    throw error;
  }
  close();
  return { lines, lastAt, startedAt };
}

/** One write; a FIFO's pipe that is full (EAGAIN: its descriptor is non-blocking) is tried again until it takes some. */
function writeSome(io: TrimIo, fd: number, bytes: Buffer, at: number): number {
  for (;;) {
    try {
      return io.write(fd, bytes, at);
    } catch (error) {
      if (code(error) !== 'EAGAIN') throw error;
      pause(FIFO_RETRY_MS);
    }
  }
}

/** What a trim in a worker came to. */
export type TrimOutcome =
  | { readonly kind: 'done'; readonly trimmed: Trimmed }
  /** The window is the command line's fault (nothing written): exit 2. */
  | { readonly kind: 'usage'; readonly message: string }
  /** `file`: the file it is about, the trace or `-o`'s. */
  | { readonly kind: 'error'; readonly file: string; readonly message: string }
  /** Stopped by {@link TrimRun.stop}: the temporary file removed, `out` as it was. */
  | { readonly kind: 'stopped' };

/** What the worker posts before its outcome: `-o` is a FIFO without a reader, and the cut waits for one. */
export interface TrimWaiting {
  readonly kind: 'waiting';
}

export interface TrimRun {
  readonly outcome: Promise<TrimOutcome>;
  /** Stops the cut wherever it is (the worker terminated), then removes the temporary file. */
  stop(): void;
}

/** What the worker (trimWorker.ts) is given. */
export interface TrimJob {
  readonly file: string;
  readonly window: TrimWindow;
  readonly out: string;
  readonly temp: string;
}

/**
 * `rx-informer trim`'s cut, in a worker thread. The cut is synchronous from the first line read to the rename, and a
 * signal's handler runs only between tasks: on the main thread, Ctrl-C would wait for the whole cut (or, without a
 * handler, kill the process and leave the temporary file). In a worker, the main thread hears the signal, stops it
 * and removes the temporary file. `waiting`: told when `-o` is a FIFO without a reader (the cut waits for one).
 */
export function trimInWorker(file: string, window: TrimWindow, out: string, waiting: () => void = () => undefined): TrimRun {
  const job: TrimJob = { file, window, out, temp: tempFileFor(out) };
  // trimWorker.ts beside this file in src/, trimWorker.js in dist/.
  const entry = new URL(`./trimWorker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  const worker = new Worker(entry, { workerData: job, stdout: false, stderr: false });
  let stopped = false;
  let settled: TrimOutcome | undefined;
  const outcome = new Promise<TrimOutcome>((resolve) => {
    worker.on('message', (message: TrimOutcome | TrimWaiting) => (message.kind === 'waiting' ? waiting() : (settled = message)));
    worker.once('error', (error) => (settled ??= { kind: 'error', file, message: messageOf(error) }));
    worker.once('exit', () => {
      // Whatever ended it, no temporary file stays (a cut that ended whole renamed it).
      rmSync(job.temp, { force: true });
      // A cut that ended before the stop took effect is what it came to.
      resolve(settled ?? (stopped ? { kind: 'stopped' } : { kind: 'error', file, message: 'the trim worker ended without a word' }));
    });
  });
  return {
    outcome,
    stop() {
      stopped = true;
      void worker.terminate();
    },
  };
}

/** The permission bits of the file at `path`, or `fresh`, those of a new file (less the umask). */
function modeOf(path: string, fresh: number): number {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return fresh;
  }
}
