/**
 * `rx-informer record RESOURCE... -o trace.jsonl`: one informer per resource over a recorded
 * ListWatch, every request and what came of it written to one trace (docs/testing.md).
 */
import { closeSync, existsSync } from 'node:fs';
import { firstValueFrom, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { discover, toResource } from '../discovery/index.ts';
import { informer } from '../index.ts';
import {
  httpListWatch,
  isSecretResource,
  MAX_TRACE_LINE_BYTES,
  record,
  resourceName,
  traceFileSink,
  traceWriter,
  type TraceFileSink,
  type TraceStopReason,
  type TraceWriter,
} from '../pipeline.ts';
import { FIFO_RETRY_MS, isFifo, tryOpenFifo } from '../1-transport/trace/fifo.ts';
import { encodingOptions } from './args.ts';
import { credentialSource, explain } from './explain.ts';
import { count, messageOf } from './format.ts';
import { givesUp } from './session.ts';
import { waitingOnPlugin } from './pluginWait.ts';
import type { RecordCommandOptions } from './recordArgs.ts';
import { resolveResources, UsageError } from './watch.ts';

/** Where the command writes its progress lines (stderr, scrubbed, in the bin). */
export interface RecordTerminal {
  readonly err: (line: string) => void;
  /** Told true while `-o` is a FIFO waiting for its reader, false once it has one (so a Ctrl-C meanwhile is named). */
  readonly waiting?: (waiting: boolean) => void;
  /**
   * Removes the secrets the configuration holds from a text (the scrubber of stderr): applied to the errors the trace
   * records (`TraceWriterOptions.scrub`), so that a failure quoting one (an exec plugin's stderr) is not written.
   */
  readonly scrub?: (text: string) => string;
}

export interface Recording {
  /** Resolves when every resource has synced. */
  readonly synced: Promise<void>;
  /** Resolves when the writer stops by itself (`maxBytes`, `duration`, or `closed` after a failed write). */
  readonly stopped: Promise<TraceStopReason>;
  /**
   * Resolves, with the sentence saying why, when the recording cannot go on as asked: a resource's list refused before
   * it synced with a 400 (a bad selector), or every resource's with a 400, 403 or 404 (as `watch` gives up).
   */
  readonly failed: Promise<string>;
  /** Stops the informers, then writes the stop line (`closed`) and closes the file. Idempotent; never throws. */
  stop(): void;
  readonly writer: TraceWriter;
  /**
   * Why the file could not be written (a full disk: `ENOSPC`, `EFBIG`), once it could not: it then ends with the last
   * whole line written (see `traceFileSink`), with no stop line.
   */
  readonly error: unknown;
  /** Why a line was refused for being longer than a reader reads (the recording stopped before it), if one was. */
  readonly refusedLine: string | undefined;
  /** Why the recording stopped at the requests a reader reads (`MAX_TRACE_REQUESTS`), if it did (`maxBytes`, exit 0). */
  readonly requestCap: string | undefined;
  /** Bytes in the file: whole lines written. */
  readonly bytes: number;
  /**
   * Resolves once the file holds every line taken, after `stop()`: at once for a regular file; a pipe's reader (a
   * FIFO) may still be taking what was queued for it (a Ctrl-C meanwhile need not wait).
   */
  drained(): Promise<void>;
}

/**
 * The trace file, opened on the writer's first write: a writer refused before it writes (a `--max-bytes` too small
 * for the header: a RangeError, a usage error here) never opens `path`, so a file already there is left as it was.
 */
function lazyFile(
  path: string,
  mode: number | undefined,
  held: number | undefined,
  onError: (error: unknown) => void,
): { readonly sink: () => TraceFileSink; close(): void; bytes(): number; drained(): Promise<void> } {
  let file: TraceFileSink | undefined;
  const open = () => {
    const opened = traceFileSink(path, { ...(mode === undefined ? {} : { mode }), onError });
    // The FIFO's reader is there (`held` kept it from seeing an end): the sink's own descriptor now keeps it.
    if (held !== undefined) closeSync(held);
    return opened;
  };
  return {
    sink: () => (file ??= open()),
    close: () => file?.close(),
    bytes: () => file?.bytes ?? 0,
    drained: () => file?.drained() ?? Promise.resolve(),
  };
}

/**
 * For a FIFO `path`: waits, on the event loop (a signal ends the run meanwhile), until it has a reader, saying so once,
 * and returns a descriptor that holds it open until the sink opens its own (a blocking open then returns at once: the
 * reader is there). Undefined for anything else.
 */
async function fifoReader(path: string, terminal: RecordTerminal): Promise<number | undefined> {
  if (!isFifo(path)) return undefined;
  for (let told = false; ; await new Promise((resolve) => setTimeout(resolve, FIFO_RETRY_MS))) {
    const fd = tryOpenFifo(path);
    if (fd !== undefined) {
      terminal.waiting?.(false);
      return fd;
    }
    if (!told) {
      terminal.err(`waiting for a reader of ${path} (a FIFO; Ctrl-C to stop)`);
      terminal.waiting?.(true);
    }
    told = true;
  }
}

/**
 * `watch`'s rule for a resource retrying cannot list (see `givesUp`): it is left out (a line says so) and the recording
 * goes on with the others; it fails (`failed`, the sentence) on a 400 (the command itself is wrong: a bad selector),
 * or when none is left.
 */
function givingUp(
  resources: number,
  terminal: RecordTerminal,
): { readonly failed: Promise<string>; up(name: string, reason: string, why: string): boolean } {
  let left = resources;
  let fail: (sentence: string) => void = () => undefined;
  const failed = new Promise<string>((resolve) => (fail = resolve));
  return {
    failed,
    /** True when the recording goes on without the resource. */
    up(name, reason, why) {
      left--;
      if (reason === 'BadRequest' || resources === 1) {
        fail(`cannot record ${name}: ${why}`);
        return false;
      }
      terminal.err(`! not recording ${name}: ${why}`);
      if (left > 0) return true;
      fail(`none of the ${count(resources, 'resource')} can be recorded`);
      return false;
    },
  };
}

function writerOr(make: () => TraceWriter): TraceWriter {
  try {
    return make();
  } catch (error) {
    throw error instanceof RangeError ? new UsageError(`--max-bytes: ${error.message}`) : error;
  }
}

/**
 * Discovers the resources (as `watch` resolves them), opens the trace file and starts one informer
 * per resource whose ListWatch is recorded. Every line is written whole (`traceFileSink`: the lines of one
 * turn of the event loop in one write, whole lines only), and the stop path (a signal, `--max-bytes`, `--duration`)
 * closes the sink, which writes what it holds: a signal leaves a file that reads, with every line recorded before it.
 */
export async function recordCommand(kc: KubeConfig, command: RecordCommandOptions, terminal: RecordTerminal): Promise<Recording> {
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  let found;
  try {
    found = await firstValueFrom(waitingOnPlugin(() => discover(kc), terminal.err));
  } catch (error) {
    throw new UsageError(explain(error, server, false, credentialSource(kc)));
  }
  const chosen = resolveResources(found, { resources: command.resources, all: false });
  // A FIFO without a reader would hold the thread in `open` for good, deaf to Ctrl-C: waited for here, on the loop.
  const held = await fifoReader(command.file, terminal);
  // A new trace is its owner's only (0600), redacted or not: redaction hides Secrets, not what ConfigMaps, env values or
  // an unknown secret in a message hold. A file there before keeps its mode (its owner chose its readers), but for
  // Secret values in clear (--no-redact): a file only its owner reads, whatever it was.
  const mode = command.redact && existsSync(command.file) ? undefined : 0o600;
  // A write that failed at the end of a turn (a full disk) stops the recording now, as one failing at a line does: the
  // writer's stop line is tried, fails, and `writer.error` says why. (A quiet resource sat on a failed file for good.)
  let lateError: unknown;
  const failed = (error: unknown) => {
    lateError = error;
    writer.close();
  };
  const file = lazyFile(command.file, mode, held, (error) => failed(error));
  const writer: TraceWriter = writerOr(() =>
    traceWriter({
      write: (text) => file.sink().write(text),
      writeParts: (parts) => file.sink().writeParts(parts),
      resources: chosen.map(resourceName),
      options: {
        ...(command.namespace !== undefined ? { namespace: command.namespace } : {}),
        ...(command.labelSelector !== undefined ? { labelSelector: command.labelSelector } : {}),
        ...(command.fieldSelector !== undefined ? { fieldSelector: command.fieldSelector } : {}),
      },
      redacted: command.redact,
      ...(terminal.scrub === undefined ? {} : { scrub: terminal.scrub }),
      ...(command.maxBytes !== undefined ? { maxBytes: command.maxBytes } : {}),
      ...(command.durationMs !== undefined ? { durationMs: command.durationMs } : {}),
    }),
  );
  const recording = new Subscription();
  const giving = givingUp(chosen.length, terminal);
  const synced = chosen.map((d) => {
    const resource = toResource(d);
    const target = { resource, namespace: command.namespace, labelSelector: command.labelSelector, fieldSelector: command.fieldSelector };
    const name = resourceName(d);
    const secret = isSecretResource(d);
    // Not `secret: false` for other resources: that would turn off the rule's kind and shape checks (isSecretObject).
    const listWatch = record(httpListWatch(kc, target, encodingOptions(command.encoding)), writer, {
      resource: name,
      ...(secret ? { secret } : {}),
      redact: command.redact,
    });
    const cache = informer(listWatch, resource, { namespace: command.namespace });
    const one = new Subscription();
    recording.add(one);
    let hasSynced = false;
    return new Promise<void>((resolve) => {
      one.add(
        cache.errors$.subscribe((error) => {
          if (!givesUp(hasSynced, error)) return terminal.err(`! ${name}: ${error.reason}: ${messageOf(error)}`);
          // Left out, as `watch` leaves it out: its informer stopped, the others not waiting for it to sync.
          one.unsubscribe();
          if (giving.up(name, error.reason, explain(error, server, secret, credentialSource(kc)))) resolve();
        }),
      );
      one.add(cache.synced$.subscribe((s) => s && ((hasSynced = true), resolve())));
    });
  });
  let closed = false;
  let closeError: unknown;
  const stop = () => {
    if (closed) return;
    closed = true;
    recording.unsubscribe(); // the open requests' `end` lines first
    writer.close();
    try {
      file.close();
    } catch (error) {
      // What the writer already met, or the last lines' write (the stop line's) failing: `error` says it.
      closeError = error;
    }
  };
  return {
    synced: Promise.all(synced).then(() => undefined),
    stopped: firstValueFrom(writer.stopped$),
    failed: giving.failed,
    stop,
    writer,
    get error() {
      // `lateError`: a pipe's reader gone while it was still taking what was queued for it after the stop.
      return writer.error ?? closeError ?? lateError;
    },
    get refusedLine() {
      const bytes = writer.refusedLineBytes;
      return bytes === undefined
        ? undefined
        : `a line of ${bytes} bytes (a list page) is longer than a trace line may be (${MAX_TRACE_LINE_BYTES} bytes): not written`;
    },
    get requestCap() {
      const requests = writer.refusedRequests;
      return requests === undefined
        ? undefined
        : `the trace holds ${requests} requests, the most a reader reads (MAX_TRACE_REQUESTS): no more recorded`;
    },
    get bytes() {
      return file.bytes();
    },
    drained: () => file.drained(),
  };
}
