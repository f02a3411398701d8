/**
 * The worker thread of `rx-informer trim` (see `trimInWorker` in trimFile.ts): opens the trace, checks the window,
 * writes it, and posts what that came to (a `TrimOutcome`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openTrace } from '../pipeline.ts';
import { trimWindowProblem } from '../internal.ts';
import { messageOf } from './format.ts';
import { OutputError, trimToFile, type TrimJob, type TrimOutcome, type TrimWaiting } from './trimFile.ts';

/** The job, done: what it came to (never a throw). `waiting`: told when `out` is a FIFO without a reader. */
export function runTrimJob({ file, window, out, temp }: TrimJob, waiting?: () => void): TrimOutcome {
  try {
    const source = openTrace(file);
    // A window that ends before it starts (or before its cut) is the command line's fault: nothing is written.
    const problem = trimWindowProblem(source, window);
    if (problem !== undefined) return { kind: 'usage', message: problem };
    return { kind: 'done', trimmed: trimToFile(source, window, out, { temp, ...(waiting ? { waiting } : {}) }) };
  } catch (error) {
    // A failure to write `out` names it (a full disk there is not the trace's fault).
    return error instanceof OutputError
      ? { kind: 'error', file: out, message: error.message }
      : { kind: 'error', file, message: messageOf(error) };
  }
}

/** Whether `data` is a trim job (a test's worker thread, vitest's with `pool: 'threads'`, holds other data). */
function isTrimJob(data: unknown): data is TrimJob {
  const job = data as Partial<Record<keyof TrimJob, unknown>> | null;
  return typeof job?.file === 'string' && typeof job.out === 'string' && typeof job.temp === 'string' && typeof job.window === 'object';
}

// In trimInWorker's worker only (a test imports runTrimJob on its own thread).
if (parentPort && isTrimJob(workerData)) {
  const port = parentPort;
  port.postMessage(runTrimJob(workerData, () => port.postMessage({ kind: 'waiting' } satisfies TrimWaiting)));
}
