/**
 * Opening a FIFO (a named pipe, `<(…)`) to write without blocking the thread: `open(2)` of a FIFO without a reader
 * waits in the kernel for one, where no signal handler of Node's can run (audit24: `record -o FIFO` ignored Ctrl-C).
 * The one home of it for `trim` (which waits in a worker) and `record` (which waits on the event loop).
 */
import { constants, openSync, statSync } from 'node:fs';

/** How often a FIFO is tried again while it has no reader, or while its reader's pipe is full (ms). */
export const FIFO_RETRY_MS = 50;

/** Whether `path` is a FIFO. */
export function isFifo(path: string): boolean {
  try {
    return statSync(path).isFIFO();
  } catch {
    return false;
  }
}

/** One try to open the FIFO `path` to write: its descriptor (non-blocking), or undefined while it has no reader (ENXIO). */
export function tryOpenFifo(path: string): number | undefined {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') return undefined;
    throw error;
  }
}
