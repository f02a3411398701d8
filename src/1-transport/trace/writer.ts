/**
 * The bounded writer of a trace: whole lines only, a byte budget, a duration, a stop line.
 */
import { ReplaySubject, asyncScheduler, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import {
  TRACE_FORMAT,
  TRACE_FORMAT_VERSION,
  traceLineText,
  type TraceHeader,
  type TraceRequestLine,
  type TraceStopReason,
} from './format.ts';
import { scheduleAfter } from '../../util/scheduleAfter.ts';

/** Room kept for the `stop` line within `maxBytes`, so a stopped trace still ends with one. */
const STOP_LINE_ROOM = 64;

/** What follows the event of a line `eventLine` writes. */
const EVENT_LINE_END = '}\n';

/** Distributes `Omit` over the line types. */
type WithoutAt<T> = T extends unknown ? Omit<T, 'at'> : never;

export interface TraceWriterOptions {
  /** Receives the trace, one whole line (with its newline) per call, in order. */
  readonly write: (text: string) => void;
  /**
   * Optional: receives a line in parts, to be written one after the other (the line is their concatenation),
   * so that an event written as it came is not copied into a line first ({@link TraceFileSink}'s `writeParts`).
   * Without it, such a line goes to `write` whole.
   */
  readonly writeParts?: (parts: readonly string[]) => void;
  /** The resources recorded (for the header). */
  readonly resources: readonly string[];
  /** The server's `gitVersion`, when known (for the header). */
  readonly server?: string;
  /** The options of the recording (for the header; informative). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** Whether Secret values are redacted (for the header; the recorders do the redacting). Default true. */
  readonly redacted?: boolean;
  /**
   * The most bytes written, the header and the stop line included. Default: no limit. One that cannot hold the
   * header and the stop line is refused: `traceWriter` throws a `RangeError`, before it writes anything.
   */
  readonly maxBytes?: number;
  /** Stop this long after the start (a timer on `scheduler`). Default: no limit. */
  readonly durationMs?: number;
  /** The clock of the `at` times and the duration: the informer's. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/** Where recorders write: one per trace, shared by the `record` of each resource. */
export interface TraceWriter {
  /** A fresh request id. */
  nextId(): number;
  /** Writes one line stamped with the time now; false when the writer has stopped (nothing was written). */
  line(record: WithoutAt<TraceRequestLine>): boolean;
  /**
   * {@link TraceWriter.line} for an `event` line whose event is given as the JSON text it was read from
   * (`{"type": …, "object": …}`, as a watch line is), written as it is: not parsed, not serialized again.
   * The caller vouches for the text (see `LinedFrame`), and redacts by taking `line` instead when it must.
   * `bytes`: the text's length in UTF-8 bytes, when known (else it is measured). Optional (a writer of
   * another making may lack it: `record` then serializes the event with `line`).
   */
  eventLine?(id: number, event: string, bytes?: number): boolean;
  /** Why the writer stopped; undefined while it writes. */
  readonly stopped: TraceStopReason | undefined;
  /** Emits once, when the writer stops (by a limit or `close`), then completes (a late subscriber still hears it). */
  readonly stopped$: Observable<TraceStopReason>;
  /** Bytes written so far. */
  readonly bytes: number;
  /** What `write` threw, when it threw: the writer stopped (`closed`) then, the informer went on. */
  readonly error: unknown;
  /** Writes the stop line (`closed`) and frees the duration timer. Idempotent. */
  close(): void;
}

/**
 * A trace writer: writes the header at once, then the lines the recorders hand it. Every line is
 * whole: one that would pass `maxBytes` is not written, the writer stops (`maxBytes`) and writes
 * the stop line instead; after `durationMs` it stops (`duration`). A throwing `write` stops it
 * (`closed`, with {@link TraceWriter.error}); the requests recorded go on unharmed.
 */
export function traceWriter(options: TraceWriterOptions): TraceWriter & Required<Pick<TraceWriter, 'eventLine'>> {
  const clock = options.scheduler ?? asyncScheduler;
  const start = clock.now();
  const maxBytes = options.maxBytes ?? Infinity;
  const stops = new ReplaySubject<TraceStopReason>(1);
  let bytes = 0;
  let ids = 0;
  let stopped: TraceStopReason | undefined;
  let timer: Subscription | undefined;

  const put = (text: string, size = Buffer.byteLength(text, 'utf8')) => {
    options.write(text);
    bytes += size;
  };
  let failure: unknown;
  const stop = (why: TraceStopReason) => {
    if (stopped) return;
    stopped = why;
    timer?.unsubscribe();
    try {
      if (failure === undefined) put(traceLineText({ type: 'stop', at: clock.now() - start, why }));
    } catch (e) {
      failure = e;
    }
    stops.next(why);
    stops.complete();
  };

  const header: TraceHeader = {
    type: 'header',
    format: TRACE_FORMAT,
    version: TRACE_FORMAT_VERSION,
    startedAt: new Date().toISOString(),
    ...(options.server === undefined ? {} : { server: options.server }),
    resources: [...options.resources],
    ...(options.options === undefined ? {} : { options: { ...options.options } }),
    redacted: options.redacted ?? true,
  };
  const headerText = traceLineText(header);
  const headerBytes = Buffer.byteLength(headerText, 'utf8');
  if (headerBytes + STOP_LINE_ROOM > maxBytes)
    throw new RangeError(
      `a trace of at most ${maxBytes} bytes cannot hold its header (${headerBytes} bytes) and its stop line ` +
        `(up to ${STOP_LINE_ROOM}): give at least ${headerBytes + STOP_LINE_ROOM} bytes`,
    );
  put(headerText, headerBytes);
  if (options.durationMs !== undefined) timer = scheduleAfter(clock, () => stop('duration'), options.durationMs);

  /** The time of a line to write now, or undefined when the writer has stopped (or stops now, at its duration). */
  const now = (): number | undefined => {
    if (stopped) return undefined;
    const at = clock.now() - start;
    if (options.durationMs === undefined || at < options.durationMs) return at;
    stop('duration');
    return undefined;
  };
  /** Writes a whole line within the budget, or stops; `size`: its UTF-8 bytes, `parts`: the line in parts, if it was given so. */
  const whole = (text: () => string, size: number, parts?: readonly string[]): boolean => {
    if (bytes + size + STOP_LINE_ROOM > maxBytes) {
      stop('maxBytes');
      return false;
    }
    try {
      if (parts && options.writeParts) options.writeParts(parts);
      else options.write(text());
      bytes += size;
      return true;
    } catch (e) {
      failure = e;
      stop('closed');
      return false;
    }
  };

  return {
    nextId: () => ids++,
    line(record) {
      const at = now();
      if (at === undefined) return false;
      // `type` and `at` first: a trace reads well by eye.
      const { type, ...rest } = record;
      const text = traceLineText({ type, at, ...rest } as TraceRequestLine);
      return whole(() => text, Buffer.byteLength(text, 'utf8'));
    },
    eventLine(id, event, eventBytes = Buffer.byteLength(event, 'utf8')) {
      const at = now();
      if (at === undefined) return false;
      // The members as `line` writes them, `event` last: {"type":"event","at":…,"id":…,"event":…}.
      const head = `{"type":"event","at":${JSON.stringify(at)},"id":${JSON.stringify(id)},"event":`;
      const parts = [head, event, EVENT_LINE_END];
      return whole(() => parts.join(''), head.length + eventBytes + EVENT_LINE_END.length, parts);
    },
    get stopped() {
      return stopped;
    },
    stopped$: stops.asObservable(),
    get bytes() {
      return bytes;
    },
    get error() {
      return failure;
    },
    close: () => stop('closed'),
  };
}
