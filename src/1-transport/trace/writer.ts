/**
 * The bounded writer of a trace: whole lines only, a byte budget, a duration, a stop line.
 */
import { ReplaySubject, asyncScheduler, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { monotonicScheduler } from '../../util/monotonicNow.ts';
import {
  MAX_TRACE_REQUESTS,
  TRACE_FORMAT,
  TRACE_FORMAT_VERSION,
  traceLineParts,
  scrubbedError,
  traceLineText,
  type TraceHeader,
  type TraceRequestLine,
  type TraceStopReason,
} from './format.ts';
import { scheduleAfter } from '../../util/scheduleAfter.ts';
import { initialWriter, STOP_LINE_ROOM, writerStep, type WriterInput, type WriterLimits } from './writerStep.ts';

/** What follows the event of a line `eventLine` writes. */
const EVENT_LINE_END = '}\n';

/**
 * `JSON.stringify(value)` of a number, ten times cheaper (a template's conversion instead of a call into the
 * serializer, on every event's line): both spell a finite number as `Number.prototype.toString` does (-0 as `0`),
 * and JSON has no other numbers (`null` for the rest, as `JSON.stringify` writes them).
 */
export function jsonNumber(value: number): string {
  return Number.isFinite(value) ? `${value}` : 'null';
}

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
   * Applied to the text of every error a line carries (a `failure`'s or a `notice`'s, a page's notice: the message and
   * each string of the server's Status) before it is written: the CLI passes the scrubber of the secrets its
   * configuration holds, so that a failure quoting one (an exec plugin's stderr quoting its environment) is written
   * without it, as stderr shows it. One that throws withholds the text. Default: written as they are.
   */
  readonly scrub?: (text: string) => string;
  /**
   * The most bytes written, the header and the stop line included. Default: no limit. One that cannot hold the
   * header and the stop line is refused: `traceWriter` throws a `RangeError`, before it writes anything.
   */
  readonly maxBytes?: number;
  /** The most requests (list and watch lines) written. Default, and at most: `MAX_TRACE_REQUESTS`, what a reader reads. */
  readonly maxRequests?: number;
  /** Stop this long after the start (a timer on `scheduler`). Default: no limit. */
  readonly durationMs?: number;
  /**
   * The clock of the `at` times and the duration: the informer's. Default `monotonicScheduler` (`asyncScheduler`'s
   * timers, a monotonic clock: `at` never goes backwards across a wall-clock step, which the reader would refuse).
   */
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
  /**
   * The UTF-8 bytes of the line that stopped the writer (`maxBytes`) for being longer than a reader reads
   * (`MAX_TRACE_LINE_BYTES`: a list page that large), so that the file still reads; undefined otherwise.
   */
  readonly refusedLineBytes?: number | undefined;
  /**
   * The requests written when the writer stopped (`maxBytes`) rather than write one more than a reader reads
   * (`MAX_TRACE_REQUESTS`), so that the file still reads; undefined otherwise.
   */
  readonly refusedRequests?: number | undefined;
  /** What `write` threw, when it threw: the writer stopped (`closed`) then, the informer went on. */
  readonly error: unknown;
  /** Writes the stop line (`closed`) and frees the duration timer. Idempotent. */
  close(): void;
}

/**
 * A trace writer: writes the header at once, then the lines the recorders hand it. Every line is
 * whole: one that would pass `maxBytes` is not written, the writer stops (`maxBytes`) and writes
 * the stop line instead; after `durationMs` it stops (`duration`). A throwing `write` stops it
 * (`closed`, with {@link TraceWriter.error}); the requests recorded go on unharmed. (The rules are a
 * pure step, `writerStep` in writerStep.ts; this function is its shell.)
 */
export function traceWriter(options: TraceWriterOptions): TraceWriter & Required<Pick<TraceWriter, 'eventLine'>> {
  const clock = options.scheduler ?? monotonicScheduler;
  const { scrub } = options;
  const start = clock.now();
  const limits: WriterLimits = {
    maxBytes: options.maxBytes ?? Infinity,
    durationMs: options.durationMs,
    maxRequests: Math.min(options.maxRequests ?? MAX_TRACE_REQUESTS, MAX_TRACE_REQUESTS),
  };
  const stops = new ReplaySubject<TraceStopReason>(1);
  const { text: headerText, bytes: headerBytes } = headerLine(options, limits.maxBytes);
  options.write(headerText);
  let state = initialWriter(headerBytes);
  let ids = 0;
  let failure: unknown;
  let timer: Subscription | undefined;

  /**
   * Steps the machine and carries out its effects; `line`: the line offered, if any (its text, or
   * its parts). True when it was written.
   */
  const step = (input: WriterInput, line?: string | readonly string[]): boolean => {
    const next = writerStep(state, input, limits);
    state = next.state;
    let wrote = false;
    for (const effect of next.effects) {
      switch (effect.type) {
        case 'write':
          wrote = attempt(line!, (input as { readonly size: number }).size, (input as { readonly request?: boolean }).request);
          break;
        case 'freeTimer':
          timer?.unsubscribe();
          break;
        case 'stopLine': {
          const text = traceLineText({ type: 'stop', at: effect.at, why: effect.why });
          attempt(text, Buffer.byteLength(text, 'utf8'));
          break;
        }
        case 'stopped':
          stops.next(effect.why);
          stops.complete();
          break;
      }
    }
    return wrote;
  };
  /**
   * Writes a line (given in parts: through `writeParts`, if there is one); a write that throws is
   * the writer's failure.
   */
  const attempt = (line: string | readonly string[], size: number, request?: boolean): boolean => {
    try {
      if (typeof line === 'string') options.write(line);
      else if (options.writeParts) options.writeParts(line);
      else options.write(line.join(''));
    } catch (e) {
      failure = e;
      step({ type: 'failed' });
      return false;
    }
    step({ type: 'written', size, ...(request ? { request } : {}) });
    return true;
  };
  const at = () => clock.now() - start;
  const { durationMs } = limits;
  if (durationMs !== undefined) timer = scheduleAfter(clock, () => step({ type: 'due', at: at() }), durationMs);

  return {
    nextId: () => ids++,
    line(given) {
      if (state.stopped) return false;
      const time = at();
      const record = scrub === undefined ? given : scrubbed(given, scrub);
      // `type` and `at` first: a trace reads well by eye.
      const { type, ...rest } = record;
      const parts = traceLineParts({ type, at: time, ...rest } as TraceRequestLine);
      const request = type === 'list' || type === 'watch';
      if (parts.length === 1) {
        const text = parts[0]!;
        return step({ type: 'line', at: time, size: Buffer.byteLength(text, 'utf8'), request }, text);
      }
      let size = 0;
      for (const part of parts) size += Buffer.byteLength(part, 'utf8');
      return step({ type: 'line', at: time, size, request }, parts);
    },
    eventLine(id, event, eventBytes) {
      if (state.stopped) return false;
      const time = at();
      // The members as `line` writes them, `event` last: {"type":"event","at":…,"id":…,"event":…}.
      const head = `{"type":"event","at":${jsonNumber(time)},"id":${jsonNumber(id)},"event":`;
      const parts = [head, event, EVENT_LINE_END];
      const size = head.length + (eventBytes ?? Buffer.byteLength(event, 'utf8')) + EVENT_LINE_END.length;
      return step({ type: 'line', at: time, size }, parts);
    },
    get stopped() {
      return state.stopped;
    },
    stopped$: stops.asObservable(),
    get bytes() {
      return state.bytes;
    },
    get refusedLineBytes() {
      return state.refusedLineBytes;
    },
    get refusedRequests() {
      return state.refusedRequests;
    },
    get error() {
      return failure;
    },
    close: () => void step({ type: 'close', at: at() }),
  };
}

/** `line` with the text of the errors it carries scrubbed (see {@link TraceWriterOptions.scrub}). */
function scrubbed(line: WithoutAt<TraceRequestLine>, scrub: (text: string) => string): WithoutAt<TraceRequestLine> {
  if (line.type === 'failure' || line.type === 'notice') return { ...line, error: scrubbedError(line.error, scrub) };
  if (line.type === 'page' && line.notice !== undefined) return { ...line, notice: scrubbedError(line.notice, scrub) };
  return line;
}

/**
 * The header line of a trace written with these options, and its UTF-8 bytes; a RangeError when
 * `maxBytes` cannot hold it and the stop line.
 */
function headerLine(options: TraceWriterOptions, maxBytes: number): { readonly text: string; readonly bytes: number } {
  const text = traceLineText(header(options));
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes + STOP_LINE_ROOM > maxBytes)
    throw new RangeError(
      `a trace of at most ${maxBytes} bytes cannot hold its header (${bytes} bytes) and its stop line ` +
        `(up to ${STOP_LINE_ROOM}): give at least ${bytes + STOP_LINE_ROOM} bytes`,
    );
  return { text, bytes };
}

/** The header of a trace written with these options. */
function header(options: TraceWriterOptions): TraceHeader {
  return {
    type: 'header',
    format: TRACE_FORMAT,
    version: TRACE_FORMAT_VERSION,
    startedAt: new Date().toISOString(),
    ...(options.server === undefined ? {} : { server: options.server }),
    resources: [...options.resources],
    ...(options.options === undefined ? {} : { options: { ...options.options } }),
    redacted: options.redacted ?? true,
  };
}
