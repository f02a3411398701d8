/**
 * The kubeconfig file read once and bounded (audit10): a pipe (`--kubeconfig <(kubectl config view --raw)`) loads, as it
 * is read once; a file larger than KUBECONFIG_MAX_BYTES is refused, by its size when it is a regular file, at the cap when
 * it is a pipe or a character device; relative certificate paths and several files in $KUBECONFIG load as before.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  KUBECONFIG_MAX_BYTES,
  readKubeConfig,
  readKubeConfigFifo,
  readKubeConfigFile,
  readKubeConfigInterruptibly,
} from '../../src/cli/kubeconfig.ts';
import { until } from '../resilience/harness/probes.ts';
import { cli, killAll } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'rx-kubeconfig-file-'));
const writers: ChildProcess[] = [];
afterAll(() => {
  killAll();
  for (const w of writers) w.kill();
  rmSync(dir, { recursive: true, force: true });
});

const kubeconfig = (name: string, extra = '') => `apiVersion: v1
kind: Config
clusters:
- name: ${name}
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true${extra}
users:
- name: ${name}
  user:
    token: t-${name}
contexts:
- name: ${name}
  context: { cluster: ${name}, user: ${name} }
current-context: ${name}
`;

/**
 * A FIFO in the scratch directory that another process writes the file `source` into, then closes: the shell's `<(…)`.
 * A reader that opens it again finds it empty, as /dev/fd/63 is at its end the second time (the writer opens it once
 * more and closes it at once; it waits for a reader that never comes when there is no second read, until afterAll).
 */
function fifoOf(name: string, source: string): string {
  const fifo = join(dir, name);
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  const writer = spawn('sh', ['-c', 'cat "$1" > "$2"; : > "$2"', 'sh', source, fifo], { stdio: 'ignore' });
  writers.push(writer);
  return fifo;
}

describe('the kubeconfig file, read once and bounded', () => {
  it('a pipe (process substitution) loads: it is read once, not again by the client', () => {
    const source = join(dir, 'piped.yaml');
    writeFileSync(source, kubeconfig('piped'));
    const { kubeConfig } = readKubeConfig(fifoOf('piped.fifo', source), undefined);
    expect(kubeConfig.getCurrentContext()).toBe('piped');
    expect(kubeConfig.getCurrentUser()?.token).toBe('t-piped');
  });

  it('a regular file over the cap is refused by its size, unread; a pipe over it is cut at the cap; one line each', () => {
    const sparse = join(dir, 'huge.yaml');
    writeFileSync(sparse, '');
    truncateSync(sparse, KUBECONFIG_MAX_BYTES + 1);
    const message = `larger than 16 MiB, the most a kubeconfig may hold (docs/cli.md)`;
    expect(() => readKubeConfig(sparse, undefined)).toThrow(`cannot load kubeconfig ${sparse}: ${message}`);
    // A stream of one byte more than the cap (its size is unknown until read): an error at the cap, not a parse error.
    expect(() => readKubeConfig(fifoOf('huge.fifo', sparse), undefined)).toThrow(`: ${message}`);
    // Exactly the cap is read, whatever the file's kind.
    const small = join(dir, 'small.yaml');
    writeFileSync(small, 'x'.repeat(4096));
    expect(readKubeConfigFile(small, 4096)).toHaveLength(4096);
    expect(() => readKubeConfigFile(small, 4095)).toThrow('larger than 4095 bytes');
    expect(readKubeConfigFile(fifoOf('small.fifo', small), 4096)).toHaveLength(4096);
  });

  it('a character device that never ends (/dev/zero, only read) stops at the cap', () => {
    expect(() => readKubeConfigFile('/dev/zero', 4096)).toThrow('larger than 4096 bytes, the most a kubeconfig may hold');
    expect(() => readKubeConfig('/dev/zero', undefined)).toThrow(/^cannot load kubeconfig \/dev\/zero: larger than 16 MiB/);
  });

  it('errors of the file system say which file and why (a file of several in $KUBECONFIG is named)', () => {
    const good = join(dir, 'good.yaml');
    writeFileSync(good, kubeconfig('good'));
    const missing = join(dir, 'missing.yaml');
    expect(() => readKubeConfig(missing, undefined)).toThrow(new RegExp(`^cannot load kubeconfig ${missing}: no such file$`));
    expect(() => readKubeConfig(undefined, undefined, undefined, { env: { KUBECONFIG: `${good}:${missing}` } })).toThrow(
      `cannot load kubeconfig ${missing}: no such file`,
    );
    expect(() => readKubeConfig(dir, undefined)).toThrow(`cannot load kubeconfig ${dir}: is a directory`);
  });

  it('a kubeconfig with no current-context lists its contexts, as --context does (audit51)', () => {
    const file = join(dir, 'noctx.json');
    const contexts = ['a', 'b'].map((name) => ({ name, context: { cluster: 'c', user: 'u' } }));
    const clusters = [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }];
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters, users: [{ name: 'u', user: {} }], contexts }));
    expect(() => readKubeConfig(file, undefined)).toThrow(
      'the kubeconfig names no current cluster (set a current-context or pass --context; its contexts: a, b)',
    );
  });

  it('relative certificate paths resolve against the file; several files in $KUBECONFIG merge, the last current-context winning', () => {
    const withCa = join(dir, 'with-ca.yaml');
    writeFileSync(join(dir, 'ca.crt'), 'not checked here');
    writeFileSync(withCa, kubeconfig('with-ca', '\n    certificate-authority: ca.crt').replace('    insecure-skip-tls-verify: true\n', ''));
    const other = join(dir, 'other.yaml');
    writeFileSync(other, kubeconfig('other'));
    const merged = readKubeConfig(undefined, undefined, undefined, { env: { KUBECONFIG: `${withCa}:${other}` } }).kubeConfig;
    expect(merged.getContexts().map((c) => c.name)).toEqual(['with-ca', 'other']);
    expect(merged.getCurrentContext()).toBe('other');
    expect(merged.getCluster('with-ca')?.caFile).toBe(join(dir, 'ca.crt'));
    const one = readKubeConfig(withCa, undefined).kubeConfig;
    expect(one.getCurrentCluster()?.caFile).toBe(join(dir, 'ca.crt'));
  });
});

/** Opens `fifo` to write once a reader has it open (ENXIO until then), and never writes: a writer that never writes. */
async function silentWriter(fifo: string): Promise<number> {
  let fd: number | undefined;
  const opened = await until(
    () => {
      try {
        fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
        return false;
      }
    },
    20_000,
    20,
  );
  expect(opened).toBe(true);
  return fd!;
}

describe('a kubeconfig FIFO read without blocking the thread (the bin: a signal ends the wait for its writer)', () => {
  it('loads as readKubeConfig loads it; over the cap, cut there with the same line', async () => {
    const source = join(dir, 'async.yaml');
    writeFileSync(source, kubeconfig('async'));
    const { kubeConfig } = await readKubeConfigInterruptibly(fifoOf('async.fifo', source), undefined);
    expect(kubeConfig.getCurrentUser()?.token).toBe('t-async');
    const sparse = join(dir, 'huge-async.yaml');
    writeFileSync(sparse, '');
    truncateSync(sparse, KUBECONFIG_MAX_BYTES + 1);
    const huge = fifoOf('huge-async.fifo', sparse);
    await expect(readKubeConfigInterruptibly(huge, undefined)).rejects.toThrow(
      `cannot load kubeconfig ${huge}: larger than 16 MiB, the most a kubeconfig may hold (docs/cli.md)`,
    );
    const small = join(dir, 'small-async.yaml');
    writeFileSync(small, 'x'.repeat(4096));
    expect(await readKubeConfigFifo(fifoOf('small-async.fifo', small), 4096)).toHaveLength(4096);
    await expect(readKubeConfigFifo(fifoOf('small-async-over.fifo', small), 4095)).rejects.toThrow('larger than 4095 bytes');
  });

  it.each([
    { command: ['watch', 'pods'], signal: 'SIGINT' as const, code: 130, said: [] as string[] },
    {
      command: ['record', 'pods', '-o', 'never.jsonl'],
      signal: 'SIGTERM' as const,
      code: 143,
      said: ['stopped before the kubeconfig was read'],
    },
  ])(
    'the bin ($command.0): a writer that never writes, then $signal: exit $code',
    async ({ command, signal, code, said }) => {
      const fifo = join(dir, `${command[0]}-silent.fifo`);
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const run = cli([...command, '--kubeconfig', fifo]);
      // Once the bin has the FIFO open, a writer that writes nothing: before, the bin was held in read(2) for good.
      const writer = await silentWriter(fifo);
      try {
        run.proc.kill(signal);
        expect(await run.exit).toEqual({ code, signal: null });
        for (const words of said) expect(run.err.join('\n')).toContain(words);
      } finally {
        closeSync(writer);
      }
    },
    30_000,
  );
});
