/**
 * Bounds held before their cost, for the token and TLS file reader and the exec plugin runner: a file over its limit is
 * refused by its size before a buffer of that size exists (tokenFile.ts, readRegularFile), `within` leaves no timer
 * once its promise settled, and a plugin that exited and closed its output leaves no grace timer armed (execPlugin.ts).
 * A timer left behind holds the process open (a CLI run that ends a second late) and, for `within`, one per request.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readRegularFile, within } from '../../src/1-transport/http/tokenFile.ts';
import { runPlugin } from '../../src/1-transport/http/execPlugin.ts';

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('readRegularFile: a file over the limit is refused by its size', () => {
  it('a 64 MiB (sparse) file against a 1 KiB limit: no buffer larger than the limit + 1 is allocated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-bounds-'));
    dirs.push(dir);
    const path = join(dir, 'token');
    writeFileSync(path, '');
    truncateSync(path, 64 * 1024 * 1024);
    const alloc = vi.spyOn(Buffer, 'alloc');
    expect(await readRegularFile(path, 1024)).toBe('larger than 1 KiB');
    expect(Math.max(0, ...alloc.mock.calls.map(([size]) => size))).toBeLessThanOrEqual(1025);
  });

  it('a file of exactly the limit is read whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-bounds-'));
    dirs.push(dir);
    const path = join(dir, 'token');
    writeFileSync(path, 'a'.repeat(1024));
    const read = await readRegularFile(path, 1024);
    expect(typeof read === 'string' ? read : read.bytes?.length).toBe(1024);
  });
});

describe('readRegularFile: a file that grows while it is read', () => {
  it('past the limit after fstat said it was within: refused, not cut at the limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-bounds-'));
    dirs.push(dir);
    const path = join(dir, 'token');
    writeFileSync(path, 'a'.repeat(10));
    const probe = await open(path);
    const prototype = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const read = prototype.read;
    let grown = false;
    // The file grows between fstat (10 bytes) and the first read: a writer appending to it, deterministically.
    vi.spyOn(prototype, 'read').mockImplementation(function (this: FileHandle, ...args: unknown[]) {
      if (!grown) appendFileSync(path, 'b'.repeat(2000));
      grown = true;
      return (read as (...a: unknown[]) => ReturnType<FileHandle['read']>).apply(this, args);
    } as FileHandle['read']);
    expect(await readRegularFile(path, 100)).toMatch(/^larger than /);
    expect(grown).toBe(true);
  });
});

describe('timers left behind', () => {
  it('within(): no timer once the promise it waits for has settled (fulfilled or rejected)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    expect(await within(Promise.resolve(7), 60_000)).toBe(7);
    expect(vi.getTimerCount()).toBe(0);
    await expect(within(Promise.reject(new Error('no')), 60_000)).rejects.toThrow('no');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('within(): undefined when the time runs out first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const answer = within(new Promise<number>(() => undefined), 60_000);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await answer).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runPlugin: a plugin that exited and closed its output leaves no grace timer armed', async () => {
    // Only the timers are fake: the child process and its pipes are real. Its exit arms the grace, its close ends the run.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const result = await firstValueFrom(
      runPlugin({ command: 'sh', args: ['-c', 'echo ok'], env: process.env, maxStdoutBytes: 1024, maxStderrBytes: 1024 }),
    );
    expect(result).toMatchObject({ outcome: 'exited', code: 0, stdout: 'ok\n' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runPlugin: a plugin ended by its output limit arms no grace timer when it then exits', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let child: ChildProcess | undefined;
    const result = await firstValueFrom(
      runPlugin({
        command: 'sh',
        args: ['-c', 'printf %0200d 0; sleep 5'],
        env: process.env,
        maxStdoutBytes: 100,
        maxStderrBytes: 1024,
        started: (c) => (child = c),
      }),
    );
    expect(result).toMatchObject({ outcome: 'too-large', stream: 'stdout' });
    if (child?.exitCode === null && child.signalCode === null) await once(child, 'exit');
    expect(vi.getTimerCount()).toBe(0);
  });
});
