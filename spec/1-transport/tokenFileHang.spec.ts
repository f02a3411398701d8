/**
 * A token file that does not answer must not take the process with it (audit20, finding 3): a FIFO with no writer
 * (or a device) is refused unread, where a blocking open() held one of libuv's four threads for good and every
 * request that found no token started another (after four, every fs call, gzip inflate and dns.lookup of the
 * process waited); one read per file is in flight, shared by every request; past TOKEN_FILE_READ_TIMEOUT_MS (a hung
 * mount) requests go on with the last token (one warning); with none they wait for it; no other read starts.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import type { InformerError } from '../../src/index.ts';
import { TOKEN_FILE_PERIOD_MS, TOKEN_FILE_READ_TIMEOUT_MS, tokenFromFile } from '../../src/1-transport/http/tokenFile.ts';

let dir: string | undefined;
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const tempDir = () => (dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-token-hang-')));

async function outcome(promise: Promise<{ token: string }>): Promise<string> {
  try {
    return `token ${(await promise).token}`;
  } catch (error) {
    const e = error as InformerError;
    return `${e.reason}: ${e.message}`;
  }
}

/** Opens the FIFO's write end while a reader waits in open() (none: ENXIO), so that a thread left there is let go. */
function releaseReaders(fifo: string): void {
  for (let i = 0; i < 16; i++) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      return;
    }
  }
}

describe('a token file that is not a regular file', () => {
  it('a FIFO with no writer is refused at once, and the thread pool stays free', async () => {
    const fifo = join(tempDir(), 'token');
    execFileSync('mkfifo', [fifo]);
    const other = join(tempDir(), 'other');
    writeFileSync(other, 'x');
    try {
      const kc = new KubeConfig();
      // Twice the thread pool: each request finds no token and needs the file.
      const results = await Promise.all(Array.from({ length: 8 }, () => outcome(tokenFromFile(kc, fifo))));
      expect(new Set(results)).toEqual(new Set([`Config: cannot read the token file ${fifo}: not a regular file (a fifo)`]));
      expect(await readFile(other, 'utf8')).toBe('x');
    } finally {
      releaseReaders(fifo);
    }
  });

  it('a device or a directory is refused unread', async () => {
    const kc = new KubeConfig();
    expect(await outcome(tokenFromFile(kc, '/dev/zero'))).toBe(
      'Config: cannot read the token file /dev/zero: not a regular file (a device or socket)',
    );
    const folder = tempDir();
    expect(await outcome(tokenFromFile(kc, folder))).toBe(`Config: cannot read the token file ${folder}: not a regular file (a directory)`);
  });
});

describe('a read that does not answer (a hung mount), in virtual time', () => {
  /** A reader whose reads answer when the spec says: how many were started, and the answer to the last. */
  function hangingReader() {
    const answers: ((token: string) => void)[] = [];
    return {
      read: (_path: string) => new Promise<string>((resolve) => answers.push(resolve)),
      started: () => answers.length,
      answer: (token: string) => answers.at(-1)!(token),
    };
  }

  it('requests with no token yet share one read and wait for it (their own requestTimeoutMs bounds them), and it is kept', async () => {
    vi.useFakeTimers();
    const kc = new KubeConfig();
    const reader = hangingReader();
    const settled: string[] = [];
    for (let i = 0; i < 10; i++) void outcome(tokenFromFile(kc, '/mnt/hung/token', 0, reader.read)).then((o) => settled.push(o));
    await vi.advanceTimersByTimeAsync(10 * TOKEN_FILE_READ_TIMEOUT_MS);
    expect([reader.started(), settled.length]).toEqual([1, 0]);
    // A later request waits for the same read.
    void outcome(tokenFromFile(kc, '/mnt/hung/token', 60_000, reader.read)).then((o) => settled.push(o));
    await vi.advanceTimersByTimeAsync(0);
    expect(reader.started()).toBe(1);

    reader.answer('late');
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toEqual(Array.from({ length: 11 }, () => 'token late'));
    expect(await outcome(tokenFromFile(kc, '/mnt/hung/token', 1_000, reader.read))).toBe('token late');
    expect(reader.started()).toBe(1);
  });

  it(`with a token read before, requests go on with it after ${TOKEN_FILE_READ_TIMEOUT_MS} ms, with one warning (RxInformerWarning, Timeout)`, async () => {
    expect(TOKEN_FILE_READ_TIMEOUT_MS).toBe(5_000);
    vi.useFakeTimers();
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const kc = new KubeConfig();
    const reader = hangingReader();
    const first = tokenFromFile(kc, '/mnt/hung/token', 0, reader.read);
    reader.answer('one');
    expect(await outcome(first)).toBe('token one');

    // A minute later the file is read again, and that read hangs.
    const settled: string[] = [];
    for (let i = 0; i < 3; i++)
      void outcome(tokenFromFile(kc, '/mnt/hung/token', TOKEN_FILE_PERIOD_MS, reader.read)).then((o) => settled.push(o));
    await vi.advanceTimersByTimeAsync(TOKEN_FILE_READ_TIMEOUT_MS - 1);
    expect([reader.started(), settled.length]).toEqual([2, 0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(['token one', 'token one', 'token one']);
    expect(await outcome(tokenFromFile(kc, '/mnt/hung/token', TOKEN_FILE_PERIOD_MS + 60_000, reader.read))).toBe('token one');
    expect(reader.started()).toBe(2);
    expect(warnings.mock.calls).toEqual([
      [
        'the token file /mnt/hung/token: no answer within 5 s (a hung mount?); the last token read from it stays in use until it answers',
        { type: 'RxInformerWarning', code: 'Timeout' },
      ],
    ]);
  });
});
