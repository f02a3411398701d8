/**
 * Traces read a line at a time: `openTrace(path)` checks a trace file in one pass and keeps an index of its
 * lines (where each is, its type, time and request), not their bodies; a line's body is read from the file when
 * it is played. `traceSource(trace)` is the same view of a trace held in memory. `replayListWatch`, `trimTrace`
 * and `rx-informer replay`/`trim` read either.
 *
 * Reads are synchronous (`readSync` into one reused buffer): a replay stays synchronous and plays under a
 * `TestScheduler` as an in-memory trace does; the one pass happens once, when the trace is opened.
 */
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import {
  MAX_TRACE_LINE_BYTES,
  TraceChecker,
  TraceFormatError,
  readTraceHeader,
  type ReadTraceOptions,
  type Trace,
  type TraceHeader,
  type TraceLine,
  type TraceList,
  type TraceWatch,
} from './format.ts';

/** A trace's lines by position, each read when asked for. Line `i` (0-based) is line `i + 2` of the file. */
export interface TraceSource {
  readonly header: TraceHeader;
  /** How many lines follow the header. */
  readonly length: number;
  typeOf(i: number): TraceLine['type'];
  /** Milliseconds since the start. */
  atOf(i: number): number;
  /** The request the line belongs to; -1 for `stop`. */
  idOf(i: number): number;
  /** A `list` or `watch` line (kept whole: they are small); undefined for the others. */
  requestAt(i: number): TraceList | TraceWatch | undefined;
  /** Line `i`, read now: an object of the caller's. A file that changed since it was checked is a `TraceFormatError`. */
  read(i: number): TraceLine;
  /** Frees what reading holds (a file descriptor); a later `read` takes it again. */
  release(): void;
}

/** A trace file checked and indexed by {@link openTrace}. */
export interface TraceFile extends TraceSource {
  readonly path: string;
  /** Its size in bytes. */
  readonly bytes: number;
}

export interface OpenTraceOptions extends ReadTraceOptions {
  /** The size of the chunks the file is read in. Default 1 MiB. */
  readonly chunkBytes?: number;
}

const TYPES = ['list', 'page', 'watch', 'event', 'notice', 'failure', 'end', 'stop'] as const satisfies readonly TraceLine['type'][];
const TYPE_CODE = new Map<string, number>(TYPES.map((t, i) => [t, i]));

/** A trace in memory as a {@link TraceSource} (a read is a copy: the caller may keep or change it). */
export function traceSource(trace: Trace): TraceSource {
  const { lines } = trace;
  const line = (i: number): TraceLine => {
    const found = lines[i];
    if (!found) throw new RangeError(`trace line ${i + 2}: no such line`);
    return found;
  };
  return {
    header: trace.header,
    length: lines.length,
    typeOf: (i) => line(i).type,
    atOf: (i) => line(i).at,
    idOf: (i) => {
      const l = line(i);
      return l.type === 'stop' ? -1 : l.id;
    },
    requestAt: (i) => {
      const l = line(i);
      return l.type === 'list' || l.type === 'watch' ? l : undefined;
    },
    read: (i) => structuredClone(line(i)),
    release: () => undefined,
  };
}

/** A trace in memory or a source as it is. */
export function asTraceSource(trace: Trace | TraceSource): TraceSource {
  return 'read' in trace ? trace : traceSource(trace);
}

/** A column of numbers that grows by doubling. */
class Column<T extends Float64Array | Uint32Array | Uint8Array> {
  length = 0;
  values: T;
  private readonly make: (n: number) => T;
  constructor(values: T, make: (n: number) => T) {
    this.values = values;
    this.make = make;
  }
  push(value: number): void {
    if (this.length === this.values.length) {
      const next = this.make(this.values.length * 2);
      next.set(this.values);
      this.values = next;
    }
    this.values[this.length++] = value;
  }
  get(i: number): number {
    if (i < 0 || i >= this.length) throw new RangeError(`trace line ${i + 2}: no such line`);
    return this.values[i]!;
  }
}

/** What the index holds per line: 29 bytes (offset, time and request id 8 each, length 4, type 1). */
class LineIndex {
  readonly offset = new Column(new Float64Array(1024), (n) => new Float64Array(n));
  readonly bytes = new Column(new Uint32Array(1024), (n) => new Uint32Array(n));
  readonly at = new Column(new Float64Array(1024), (n) => new Float64Array(n));
  readonly id = new Column(new Float64Array(1024), (n) => new Float64Array(n));
  readonly type = new Column(new Uint8Array(1024), (n) => new Uint8Array(n));
  readonly requests = new Map<number, TraceList | TraceWatch>();

  add(line: TraceLine, offset: number, bytes: number): void {
    const i = this.offset.length;
    this.offset.push(offset);
    this.bytes.push(bytes);
    this.at.push(line.at);
    this.id.push(line.type === 'stop' ? -1 : line.id);
    this.type.push(TYPE_CODE.get(line.type)!);
    if (line.type === 'list' || line.type === 'watch') this.requests.set(i, line);
  }
}

/** The one pass: every line checked as it goes by, only its place kept. */
function indexLines(fd: number, options: OpenTraceOptions): { header: TraceHeader; index: LineIndex } {
  const max = options.maxLineBytes ?? MAX_TRACE_LINE_BYTES;
  const chunk = Buffer.allocUnsafe(options.chunkBytes ?? 1024 * 1024);
  let checker: TraceChecker | undefined;
  const index = new LineIndex();
  let header: TraceHeader | undefined;
  let pieces: Buffer[] = [];
  let pending = 0; // bytes of the current line in `pieces`
  let position = 0; // the file offset of chunk[0]
  let lineStart = 0;
  let lineNo = 1;
  for (let n = readSync(fd, chunk, 0, chunk.length, 0); n > 0; n = readSync(fd, chunk, 0, chunk.length, position)) {
    const view = chunk.subarray(0, n);
    let from = 0;
    for (;;) {
      const newline = view.indexOf(10, from);
      const end = newline < 0 ? n : newline;
      // Refused before it is held whole: a line's pieces never add up to more than the limit.
      if (pending + end - from > max) throw new TraceFormatError(lineNo, `longer than ${max} bytes`);
      if (newline < 0) {
        pieces.push(Buffer.from(view.subarray(from)));
        pending += n - from;
        break;
      }
      const text = pieces.length ? Buffer.concat([...pieces, view.subarray(from, end)]).toString('utf8') : view.toString('utf8', from, end);
      if (lineNo === 1) checker = new TraceChecker((header = readTraceHeader(text, options)), options);
      else index.add(checker!.check(text, lineNo), lineStart, pending + end - from);
      lineNo++;
      lineStart = position + newline + 1;
      pieces = [];
      pending = 0;
      from = newline + 1;
    }
    position += n;
  }
  if (pending > 0) throw new TraceFormatError(lineNo, 'truncated: the last line has no newline');
  if (!header) throw new TraceFormatError(1, 'empty: no header');
  return { header, index };
}

/** The same file, unchanged: its inode (not another file moved to the path), size and mtime. */
const sameFile = (a: Stats, b: Stats) => a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs;

/**
 * Opens a trace file: reads it once in `chunkBytes` chunks, checking each line as {@link readTrace} does
 * (a `TraceFormatError` names the line: nothing is replayed from a trace that is not whole and valid), and keeps
 * an index of 29 bytes a line plus the request lines themselves. The pages and events are read again, one line
 * at a time, when they are played. A file that changes after it was opened (replaced, or its size or mtime) is an
 * error then; the file stays open while a request plays (`release` closes it; a replay does when nothing plays).
 */
export function openTrace(path: string, options: OpenTraceOptions = {}): TraceFile {
  const fd = openSync(path, 'r');
  let stat: Stats;
  let indexed: { header: TraceHeader; index: LineIndex };
  try {
    stat = fstatSync(fd);
    indexed = indexLines(fd, options);
    if (!sameFile(stat, fstatSync(fd))) throw new TraceFormatError(1, 'the file changed while it was read');
  } finally {
    closeSync(fd);
  }
  const { header, index } = indexed;
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let open: number | undefined;

  const changed = (i: number, how: string) => new TraceFormatError(i + 2, `the file changed after it was opened (${how}): open it again`);
  const read = (i: number): TraceLine => {
    const offset = index.offset.get(i);
    const bytes = index.bytes.get(i);
    open ??= openSync(path, 'r');
    const now = fstatSync(open);
    if (!sameFile(stat, now)) throw changed(i, `${stat.size} bytes then, ${now.size} now`);
    const into = bytes <= buffer.length ? buffer : Buffer.allocUnsafe(bytes);
    if (readSync(open, into, 0, bytes, offset) !== bytes) throw changed(i, 'a line is shorter');
    let line: TraceLine;
    try {
      line = JSON.parse(into.toString('utf8', 0, bytes)) as TraceLine;
    } catch {
      throw changed(i, 'a line is not JSON');
    }
    if (line?.type !== TYPES[index.type.get(i)] || line.at !== index.at.get(i)) throw changed(i, 'a line differs');
    return line;
  };
  return {
    path,
    bytes: stat.size,
    header,
    length: index.offset.length,
    typeOf: (i) => TYPES[index.type.get(i)]!,
    atOf: (i) => index.at.get(i),
    idOf: (i) => index.id.get(i),
    requestAt: (i) => index.requests.get(i),
    read,
    release: () => {
      if (open !== undefined) closeSync(open);
      open = undefined;
    },
  };
}
