/**
 * `trimToFile`'s failures: the error thrown is the first one (a write's, not the close after it), always naming `-o`'s
 * file; the temporary file is removed and `-o` left as it was. Failures are injected (TrimIo) into writes to a temp dir.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTrace, readTrace, traceSource } from '../../src/pipeline.ts';
import { OutputError, trimToFile, type TrimIo } from '../../src/cli/trimFile.ts';
import { cli, killAll } from './support.ts';

const TEXT = [
  {
    type: 'header',
    format: 'rx-informer-trace',
    version: 1,
    startedAt: '2026-01-01T10:00:00.000Z',
    resources: ['configmaps'],
    redacted: true,
  },
  { type: 'list', at: 0, id: 0, options: { limit: 500, resourceVersion: '0' } },
  { type: 'page', at: 10, id: 0, resourceVersion: '5', items: [] },
  { type: 'end', at: 10, id: 0, how: 'complete' },
  { type: 'watch', at: 11, id: 1, options: { allowWatchBookmarks: true, resourceVersion: '5', timeoutSeconds: 300 } },
  { type: 'end', at: 70_000, id: 1, how: 'unsubscribe' },
]
  .map((l) => `${JSON.stringify(l)}\n`)
  .join('');

const dirs: string[] = [];
afterAll(() => {
  killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-trimfile-'));
  dirs.push(dir);
  return dir;
}

/** A FIFO in a temp dir (never under /dev). */
function fifoIn(dir: string): string {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  return fifo;
}

/** What the window is, as written to a regular file (from the trace file `file`, as the bin reads it). */
function window(file?: string): string {
  const out = join(tempDir(), 'expected.jsonl');
  trimToFile(file === undefined ? traceSource(readTrace(TEXT)) : openTrace(file), { fromMs: 0 }, out);
  return readFileSync(out, 'utf8');
}

const fault = (code: string) => Object.assign(new Error(`${code}: injected`), { code });

/** Node's calls, with a write that fails from the `failAt`-th on and a close that fails after closing (when asked). */
function failing(failAt: number, closeFails: boolean): TrimIo {
  let writes = 0;
  return {
    write: (fd, bytes, at) => {
      if (++writes >= failAt) throw fault('EIO');
      return writeSync(fd, bytes, at);
    },
    close: (fd) => {
      closeSync(fd);
      if (closeFails) throw fault('EBADF');
    },
  };
}

function cut(io: TrimIo): { error: unknown; dir: string; out: string } {
  const dir = tempDir();
  const out = join(dir, 'window.jsonl');
  writeFileSync(out, 'before\n');
  try {
    trimToFile(traceSource(readTrace(TEXT)), { fromMs: 0 }, out, { io });
    return { error: undefined, dir, out };
  } catch (error) {
    return { error, dir, out };
  }
}

describe('trimToFile: which failure is told', () => {
  it('a write that fails, then a close that fails: the write error, naming -o; no temporary file, -o as it was', () => {
    const { error, dir, out } = cut(failing(2, true));
    expect(error).toBeInstanceOf(OutputError);
    expect((error as OutputError).file).toBe(out);
    expect((error as OutputError).message).toBe('EIO: injected');
    expect(readdirSync(dir)).toEqual(['window.jsonl']);
    expect(readFileSync(out, 'utf8')).toBe('before\n');
  });

  it('a close that fails after every write went through: the close error, naming -o', () => {
    const { error, dir, out } = cut(failing(Infinity, true));
    expect(error).toBeInstanceOf(OutputError);
    expect((error as OutputError).message).toBe('EBADF: injected');
    expect(readdirSync(dir)).toEqual(['window.jsonl']);
    expect(readFileSync(out, 'utf8')).toBe('before\n');
  });

  it('nothing fails: the window replaces -o', () => {
    const { error, out } = cut(failing(Infinity, false));
    expect(error).toBeUndefined();
    expect(readTrace(readFileSync(out, 'utf8')).header.startedAt).toBe('2026-01-01T10:00:00.011Z');
  });
});

// Without a reader, the cut in-process would hold this thread in open(2) if it regressed: the bin's tests below
// show the wait (a child process, killed by afterAll whatever happens).
describe('trimToFile onto a FIFO: never blocked in open or in a write', () => {
  it('a full pipe (EAGAIN on the non-blocking descriptor) is written again, not a failure', () => {
    let full = 3;
    const io: TrimIo = {
      write: (fd, bytes, at) => {
        if (full-- > 0) throw fault('EAGAIN');
        return writeSync(fd, bytes, at);
      },
      close: closeSync,
    };
    const { error, out } = cut(io);
    expect(error).toBeUndefined();
    expect(readFileSync(out, 'utf8')).toBe(window());
  });

  it('the bin: waiting for a reader is said, and Ctrl-C ends the wait (130, nothing written)', async () => {
    const dir = tempDir();
    const trace = join(dir, 'trace.jsonl');
    writeFileSync(trace, TEXT);
    const fifo = fifoIn(dir);
    const run = cli(['trim', trace, '--from', '0', '-o', fifo]);
    await run.line('err', /^waiting for a reader/);
    run.proc.kill('SIGINT');
    expect(await run.exit).toEqual({ code: 130, signal: null });
    expect(run.err).toEqual([`waiting for a reader of ${fifo} (a FIFO; Ctrl-C to stop)`, `stopped: ${fifo} not written`]);
    expect(readdirSync(dir).sort()).toEqual(['fifo', 'trace.jsonl']);
  }, 30_000);

  it('the bin: a reader that comes while it waits gets the window (0)', async () => {
    const dir = tempDir();
    const trace = join(dir, 'trace.jsonl');
    writeFileSync(trace, TEXT);
    const fifo = fifoIn(dir);
    const run = cli(['trim', trace, '--from', '0', '-o', fifo]);
    await run.line('err', /^waiting for a reader/);
    const cat = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    let read = '';
    cat.stdout.on('data', (chunk: Buffer) => (read += chunk.toString('utf8')));
    const catExit = new Promise((resolve) => cat.on('close', resolve));
    expect((await run.exit).code).toBe(0);
    expect(await catExit).toBe(0);
    expect(read).toBe(window(trace));
  }, 30_000);
});
