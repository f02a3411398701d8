/**
 * `rx-informer trim`'s writing: the window of a trace written to a file a line at a time, never half of one.
 */
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { writeTrimmedTrace, type TraceSource, type TrimWindow } from '../pipeline.ts';
import { traceLineText } from '../internal.ts';

export interface Trimmed {
  readonly lines: number;
  /** The window's last time (ms from its start). */
  readonly lastAt: number;
  readonly startedAt: string;
}

/**
 * Writes the window of `source` to `out` as it is read (see `writeTrimmedTrace`). A cut that fails part way (a line
 * that cannot be read) removes what it wrote, then throws: a file cut short would still read as a trace.
 */
export function trimToFile(source: TraceSource, window: TrimWindow, out: string): Trimmed {
  let fd: number | undefined;
  let lines = 0;
  let lastAt = 0;
  let startedAt = '';
  try {
    writeTrimmedTrace(source, window, (line) => {
      fd ??= openSync(out, 'w');
      writeSync(fd, traceLineText(line));
      lines++;
      if (line.type === 'header') startedAt = line.startedAt;
      else lastAt = line.at;
    });
  } catch (error) {
    if (fd !== undefined) (closeSync(fd), rmSync(out, { force: true }));
    throw error;
  }
  if (fd !== undefined) closeSync(fd);
  return { lines, lastAt, startedAt };
}
