/**
 * `rx-informer trim`'s writing: the window of a trace written to a file a line at a time, never half of one.
 */
import { closeSync, openSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeTrimmedTrace, type TraceSource, type TrimWindow } from '../pipeline.ts';
import { traceLineText } from '../internal.ts';

export interface Trimmed {
  readonly lines: number;
  /** The window's last time (ms from its start). */
  readonly lastAt: number;
  readonly startedAt: string;
}

/** The file `out` names: through a symbolic link (the link stays, its target is written), else `out` itself. */
function target(out: string): string {
  try {
    return realpathSync(out);
  } catch {
    return out;
  }
}

/**
 * Writes the window of `source` to `out` as it is read (see `writeTrimmedTrace`): into a temporary file beside it,
 * renamed onto `out` once whole. So `out` may be the trace itself (or a link to it: the trace is read to the end
 * before the rename), and a cut that fails part way (a line that cannot be read) removes only the temporary file,
 * then throws: `out` is as it was, and no file cut short is left that would still read as a trace. A file replaced
 * keeps its permissions (a trace recorded with `--no-redact` is often kept private).
 */
export function trimToFile(source: TraceSource, window: TrimWindow, out: string): Trimmed {
  const path = target(out);
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const mode = modeOf(path);
  let fd: number | undefined;
  let lines = 0;
  let lastAt = 0;
  let startedAt = '';
  try {
    writeTrimmedTrace(source, window, (line) => {
      fd ??= openSync(temp, 'wx', mode);
      writeSync(fd, traceLineText(line));
      lines++;
      if (line.type === 'header') startedAt = line.startedAt;
      else lastAt = line.at;
    });
    if (fd !== undefined) {
      closeSync(fd);
      fd = undefined;
      renameSync(temp, path);
    }
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  return { lines, lastAt, startedAt };
}

/** The permission bits of the file at `path`, or the default for a new file (0o666, less the umask). */
function modeOf(path: string): number {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return 0o666;
  }
}
