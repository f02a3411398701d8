/**
 * `rx-informer record RESOURCE... -o trace.jsonl`: one informer per resource over a recorded
 * ListWatch, every request and what came of it written to one trace (docs/testing.md).
 */
import { firstValueFrom, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { discover, toResource } from '../discovery/index.ts';
import { informer } from '../index.ts';
import {
  httpListWatch,
  isSecretResource,
  record,
  resourceName,
  traceFileSink,
  traceWriter,
  type TraceFileSink,
  type TraceStopReason,
  type TraceWriter,
} from '../pipeline.ts';
import { encodingOptions } from './args.ts';
import { explain } from './explain.ts';
import { messageOf } from './format.ts';
import type { RecordCommandOptions } from './recordArgs.ts';
import { resolveResources, UsageError } from './watch.ts';

/** Where the command writes its progress lines (stderr, scrubbed, in the bin). */
export interface RecordTerminal {
  readonly err: (line: string) => void;
}

export interface Recording {
  /** Resolves when every resource has synced. */
  readonly synced: Promise<void>;
  /** Resolves when the writer stops by itself (`maxBytes`, `duration`, or `closed` after a failed write). */
  readonly stopped: Promise<TraceStopReason>;
  /** Stops the informers, then writes the stop line (`closed`) and closes the file. Idempotent; never throws. */
  stop(): void;
  readonly writer: TraceWriter;
  /**
   * Why the file could not be written (a full disk: `ENOSPC`, `EFBIG`), once it could not: it then ends with the last
   * whole line written (see `traceFileSink`), with no stop line.
   */
  readonly error: unknown;
  /** Bytes in the file: whole lines written. */
  readonly bytes: number;
}

/**
 * The trace file, opened on the writer's first write: a writer refused before it writes (a `--max-bytes` too small
 * for the header: a RangeError, a usage error here) never opens `path`, so a file already there is left as it was.
 */
function lazyFile(path: string, mode: number | undefined): { readonly sink: () => TraceFileSink; close(): void; bytes(): number } {
  let file: TraceFileSink | undefined;
  return {
    sink: () => (file ??= traceFileSink(path, mode === undefined ? {} : { mode })),
    close: () => file?.close(),
    bytes: () => file?.bytes ?? 0,
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
    found = await firstValueFrom(discover(kc));
  } catch (error) {
    throw new UsageError(explain(error, server));
  }
  const chosen = resolveResources(found, { resources: command.resources, all: false });
  // Secret values in clear (--no-redact): a file only its owner reads.
  const file = lazyFile(command.file, command.redact ? undefined : 0o600);
  const writer = writerOr(() =>
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
      ...(command.maxBytes !== undefined ? { maxBytes: command.maxBytes } : {}),
      ...(command.durationMs !== undefined ? { durationMs: command.durationMs } : {}),
    }),
  );
  const recording = new Subscription();
  const synced = chosen.map((d) => {
    const resource = toResource(d);
    const target = { resource, namespace: command.namespace, labelSelector: command.labelSelector, fieldSelector: command.fieldSelector };
    const name = resourceName(d);
    const listWatch = record(httpListWatch(kc, target, encodingOptions(command.encoding)), writer, {
      resource: name,
      secret: isSecretResource(d),
      redact: command.redact,
    });
    const cache = informer(listWatch, resource, { namespace: command.namespace });
    recording.add(cache.errors$.subscribe((error) => terminal.err(`! ${name}: ${error.reason}: ${messageOf(error)}`)));
    return new Promise<void>((resolve) => recording.add(cache.synced$.subscribe((s) => s && resolve())));
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
    stop,
    writer,
    get error() {
      return writer.error ?? closeError;
    },
    get bytes() {
      return file.bytes();
    },
  };
}
