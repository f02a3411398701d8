/**
 * The kubeconfig file read once and bounded (audit10): a pipe (`--kubeconfig <(kubectl config view --raw)`) loads, as it
 * is read once; a file larger than KUBECONFIG_MAX_BYTES is refused, by its size when it is a regular file, at the cap when
 * it is a pipe or a character device; relative certificate paths and several files in $KUBECONFIG load as before.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUBECONFIG_MAX_BYTES, readKubeConfig, readKubeConfigFile } from '../../src/cli/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'rx-kubeconfig-file-'));
const writers: ChildProcess[] = [];
afterAll(() => {
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
    expect(() => readKubeConfig(missing, undefined)).toThrow(`cannot load kubeconfig ${missing}: ENOENT: no such file or directory`);
    expect(() => readKubeConfig(undefined, undefined, undefined, { env: { KUBECONFIG: `${good}:${missing}` } })).toThrow(
      `cannot load kubeconfig ${missing}: ENOENT`,
    );
    expect(() => readKubeConfig(dir, undefined)).toThrow(`cannot load kubeconfig ${dir}: EISDIR`);
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
