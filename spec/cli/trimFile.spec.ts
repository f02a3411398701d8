/**
 * `trimToFile`'s failures: the error thrown is the first one (a write's, not the close after it), always naming `-o`'s
 * file; the temporary file is removed and `-o` left as it was. Failures are injected (TrimIo) into writes to a temp dir.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { closeSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrace, traceSource } from '../../src/pipeline.ts';
import { OutputError, trimToFile, type TrimIo } from '../../src/cli/trimFile.ts';

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
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

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
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-trimfile-'));
  dirs.push(dir);
  const out = join(dir, 'window.jsonl');
  writeFileSync(out, 'before\n');
  try {
    trimToFile(traceSource(readTrace(TEXT)), { fromMs: 0 }, out, undefined, io);
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
