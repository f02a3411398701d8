import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseByteSize, parseCommandLine } from '../../src/cli/args.ts';
import { UsageError, explain, watchCommand } from '../../src/cli/watch.ts';
import { InformerError } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const SERVER = 'https://127.0.0.1:6443';

describe('watch --max-list-bytes, --max-line-bytes, --max-error-body-bytes, --max-document-bytes', () => {
  it('takes bytes, Ki, Mi or Gi; refuses anything else in one line (exit 2) before any request', () => {
    expect([parseByteSize('1'), parseByteSize('64Ki'), parseByteSize('512Mi'), parseByteSize('2Gi')]).toEqual([
      1,
      64 * 1024,
      512 * 1024 ** 2,
      2 * 1024 ** 3,
    ]);
    for (const bad of ['0', '0Mi', '-1', '1.5Mi', '512M', '512mi', 'Mi', '1 Gi', 'lots', '9999999999999Gi', ''])
      expect(parseByteSize(bad), bad).toBeUndefined();
    const parsed = parseCommandLine([
      'watch',
      'pods',
      '--max-list-bytes',
      '512Mi',
      '--max-line-bytes=64Mi',
      '--max-error-body-bytes',
      '4Mi',
      '--max-document-bytes',
      '16777216',
    ]);
    expect(parsed).toMatchObject({
      kind: 'run',
      options: {
        byteLimits: {
          maxListBytes: 512 * 1024 ** 2,
          maxLineBytes: 64 * 1024 ** 2,
          maxErrorBodyBytes: 4 * 1024 ** 2,
          maxDocumentBytes: 16 * 1024 ** 2,
        },
      },
    });
    expect(parseCommandLine(['watch', 'pods', '--max-list-total-bytes', '2Gi'])).toMatchObject({
      kind: 'run',
      options: { byteLimits: { maxListTotalBytes: 2 * 1024 ** 3 } },
    });
    const plain = parseCommandLine(['watch', 'pods']);
    expect(plain.kind === 'run' && plain.options.byteLimits).toBe(undefined);
    expect(parseCommandLine(['watch', 'pods', '--max-list-bytes', '512MB'])).toEqual({
      kind: 'usage',
      message: '--max-list-bytes: "512MB" is not a size (a whole number of bytes, or with Ki, Mi or Gi: 512Mi)',
    });
    expect(parseCommandLine(['watch', 'pods', '--max-document-bytes', '0'])).toMatchObject({
      kind: 'usage',
      message: /^--max-document-bytes: "0"/,
    });
    expect(parseCommandLine(['watch', 'pods', '--max-line-bytes'])).toEqual({ kind: 'usage', message: '--max-line-bytes needs a value' });
  });

  it('explain() names the flag that raises the limit a ResponseTooLarge (or an over-long watch line) names', () => {
    const list = new InformerError(
      'ResponseTooLarge',
      'list /api/v1/configmaps: the response is larger than the 256 MiB limit (268500992 bytes read); aborted (option maxListBytes)',
      { phase: 'list', status: 200 },
    );
    expect(explain(list, SERVER)).toBe(
      `ResponseTooLarge: ${list.message} (raise the limit with --max-list-bytes SIZE, e.g. --max-list-bytes 512Mi)`,
    );
    const flags = [
      ['maxErrorBodyBytes', '--max-error-body-bytes'],
      ['maxDocumentBytes', '--max-document-bytes'],
    ] as const;
    for (const [option, flag] of flags)
      expect(explain(new InformerError('ResponseTooLarge', `x: larger than the limit; aborted (option ${option})`), SERVER)).toContain(
        `with ${flag} SIZE`,
      );
    const line = new InformerError(
      'MalformedLine',
      'watch /api/v1/pods: a line passed the 16 MiB limit (16777300 bytes; option maxLineBytes); watch ended',
    );
    expect(explain(line, SERVER)).toMatch(/; watch ended \(raise the limit with --max-line-bytes SIZE, e\.g\. --max-line-bytes 512Mi\)$/);
    const whole = new InformerError(
      'ListTooLong',
      'list /api/v1/pods: the list is larger than the 518 MiB limit for a whole list (600 pages (542113792 bytes), then 1048576 bytes read of the next page); aborted, relisting after the backoff (option maxListTotalBytes; its default is an eighth of the heap limit)',
      { phase: 'list' },
    );
    expect(explain(whole, SERVER)).toBe(
      `ListTooLong: ${whole.message} (raise the limit with --max-list-total-bytes SIZE, e.g. --max-list-total-bytes 2Gi)`,
    );
    // A limit with no flag (a Lease client's) gets no advice.
    expect(explain(new InformerError('ResponseTooLarge', 'lease: too large (option maxBodyBytes)'), SERVER)).toBe(
      'ResponseTooLarge: lease: too large (option maxBodyBytes)',
    );
  });

  describe('against the emulator', () => {
    let api: ApiServer;
    beforeEach(async () => {
      api = await startApiServer({ bookmarkIntervalMs: 50 });
      api.create('configmaps', { metadata: { name: 'big', namespace: 'shop' }, data: { blob: 'x'.repeat(4096) } });
    });
    afterEach(async () => {
      await api.close();
    });

    it('--max-list-bytes reaches the informers: too small, the list fails naming the flag; raised, it syncs', async () => {
      const err: string[] = [];
      const small = await watchCommand(
        api.kubeConfig,
        { resources: ['configmaps'], all: false, output: 'pretty', byteLimits: { maxListBytes: 1024 } },
        { out: () => undefined, err: (l) => err.push(l) },
      );
      try {
        await until(() => err.some((l) => l.includes('ResponseTooLarge')));
        expect(err.find((l) => l.includes('ResponseTooLarge'))).toMatch(
          /^! configmaps: ResponseTooLarge: list \/api\/v1\/configmaps.*the 1 KiB limit.*\(raise the limit with --max-list-bytes SIZE, e\.g\. --max-list-bytes 512Mi\)$/,
        );
      } finally {
        small.stop();
      }
      const raised = await watchCommand(
        api.kubeConfig,
        { resources: ['configmaps'], all: false, output: 'pretty', byteLimits: { maxListBytes: 64 * 1024 } },
        { out: () => undefined, err: () => undefined },
      );
      try {
        await raised.synced;
      } finally {
        raised.stop();
      }
    });

    it('--max-list-total-bytes reaches the informers: too small, the list fails as ListTooLong naming the flag', async () => {
      const err: string[] = [];
      const small = await watchCommand(
        api.kubeConfig,
        { resources: ['configmaps'], all: false, output: 'pretty', byteLimits: { maxListTotalBytes: 1024 } },
        { out: () => undefined, err: (l) => err.push(l) },
      );
      try {
        await until(() => err.some((l) => l.includes('ListTooLong')));
        expect(err.find((l) => l.includes('ListTooLong'))).toMatch(
          /^! configmaps: ListTooLong: list \/api\/v1\/configmaps.*the 1 KiB limit for a whole list.*\(raise the limit with --max-list-total-bytes SIZE, e\.g\. --max-list-total-bytes 2Gi\)$/,
        );
      } finally {
        small.stop();
      }
    });

    it('--max-document-bytes reaches discovery: too small, the command fails in one sentence naming the flag', async () => {
      const failure = await watchCommand(
        api.kubeConfig,
        { resources: ['configmaps'], all: false, output: 'pretty', byteLimits: { maxDocumentBytes: 16 } },
        { out: () => undefined, err: () => undefined },
      ).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(UsageError);
      expect((failure as UsageError).message).toMatch(
        /^ResponseTooLarge: .*\(option maxDocumentBytes\) \(raise the limit with --max-document-bytes SIZE, e\.g\. --max-document-bytes 512Mi\)$/,
      );
    });
  });
});
