/**
 * `--compression gzip|none` and the kubeconfig's `disable-compression`: parsed and checked, and reaching every
 * request the CLI makes (discovery, lists, watches), as the emulator's request log shows (`acceptEncoding`).
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../../src/cli/args.ts';
import { disablesCompression, readKubeConfig } from '../../src/cli/kubeconfig.ts';
import { watchCommand } from '../../src/cli/watch.ts';
import { startApiServer, type ApiServer, type RequestRecord } from 'rx-informer-emulator';
import { cli, killAll } from './support.ts';

const SYNCED = /^synced \d+ resources?, \d+ objects? in \d+ ms/;
const quiet = { out: () => undefined, err: () => undefined };
const encodings = (requests: readonly RequestRecord[]) => [...new Set(requests.map((r) => r.acceptEncoding ?? '(none)'))];

afterAll(() => killAll());

describe('--compression', () => {
  it('takes gzip or none; anything else is a usage error naming the value', () => {
    expect(parseCommandLine(['watch', 'pods', '--compression', 'none'])).toMatchObject({ kind: 'run', options: { compression: 'none' } });
    expect(parseCommandLine(['watch', 'pods', '--compression=gzip'])).toMatchObject({ kind: 'run', options: { compression: 'gzip' } });
    // Not given: undefined, so that the kubeconfig's disable-compression can decide.
    const plain = parseCommandLine(['watch', 'pods']);
    expect(plain.kind === 'run' && 'compression' in plain.options).toBe(false);
    for (const bad of ['br', 'GZIP', 'deflate', 'off', ''])
      expect(parseCommandLine(['watch', 'pods', `--compression=${bad}`]), bad).toEqual({
        kind: 'usage',
        message: `--compression must be gzip or none, not "${bad}"`,
      });
    // The value is shown without its control characters.
    expect(parseCommandLine(['watch', 'pods', '--compression', 'zstd\u001b[31m'])).toEqual({
      kind: 'usage',
      message: '--compression must be gzip or none, not "zstd[31m"',
    });
    expect(parseCommandLine(['watch', 'pods', '--compression'])).toEqual({ kind: 'usage', message: '--compression needs a value' });
  });

  describe('against the emulator', () => {
    let api: ApiServer;
    beforeEach(async () => {
      api = await startApiServer({ bookmarkIntervalMs: 50 });
      api.create('configmaps', { metadata: { name: 'a', namespace: 'shop' }, data: { k: 'v' } });
    });
    afterEach(async () => {
      await api.close();
    });

    /** Runs the command until its informers have synced and each has a watch open; returns the requests it made. */
    async function requestsOf(command: Parameters<typeof watchCommand>[1]): Promise<readonly RequestRecord[]> {
      api.clearRequests();
      const w = await watchCommand(api.kubeConfig, command, quiet);
      try {
        await w.synced;
        await api.waitForRequest((r) => r.watch && r.resource === 'configmaps', 10_000);
        return [...api.requests];
      } finally {
        w.stop();
      }
    }

    it('none: discovery, the list and the watch go out without Accept-Encoding; the default asks for gzip', async () => {
      const none = await requestsOf({ resources: ['configmaps'], all: false, output: 'pretty', compression: 'none' });
      expect(none.some((r) => r.path === '/api')).toBe(true);
      expect(none.some((r) => r.resource === 'configmaps' && !r.watch)).toBe(true);
      expect(encodings(none)).toEqual(['(none)']);
      const byDefault = await requestsOf({ resources: ['configmaps'], all: false, output: 'pretty' });
      expect(byDefault.some((r) => r.path === '/api')).toBe(true);
      expect(encodings(byDefault)).toEqual(['gzip']);
      const gzip = await requestsOf({ resources: ['configmaps'], all: false, output: 'pretty', compression: 'gzip' });
      expect(encodings(gzip)).toEqual(['gzip']);
    });

    it('none with --all: the dynamic factory (its discovery and CRD watch) asks for nothing either', async () => {
      const none = await requestsOf({ resources: [], all: true, output: 'pretty', compression: 'none' });
      expect(none.some((r) => r.watch && r.resource === 'customresourcedefinitions')).toBe(true);
      expect(none.filter((r) => r.path === '/apis').length).toBeGreaterThanOrEqual(1);
      expect(encodings(none)).toEqual(['(none)']);
    });
  });
});

describe("the kubeconfig's disable-compression", () => {
  const yaml = (disable: string) => `apiVersion: v1
kind: Config
clusters:
- name: near
  cluster:
    server: https://10.0.0.1:6443
    disable-compression: ${disable}
- name: far
  cluster: {server: "https://far.example.com"}
users:
- name: u
  user: {token: s3cret-token}
contexts:
- {name: in-cluster, context: {cluster: near, user: u}}
- {name: remote, context: {cluster: far, user: u}}
current-context: remote
`;

  it("is read for the selected context's cluster only, and only as the boolean true", () => {
    expect(disablesCompression([yaml('true')], 'near')).toBe(true);
    expect(disablesCompression([yaml('true')], 'far')).toBe(false);
    expect(disablesCompression([yaml('false')], 'near')).toBe(false);
    // client-go's field is a bool: a string is not true.
    expect(disablesCompression([yaml('"true"')], 'near')).toBe(false);
    // Several files ($KUBECONFIG): the first that defines the cluster; one that does not parse is skipped, quietly.
    expect(disablesCompression(['clusters: [: :', '{}', yaml('true')], 'near')).toBe(true);
    expect(disablesCompression(['', 'null', '[1, 2]', 'clusters: 7', 'clusters: [null, 3, {cluster: null, name: near}]'], 'near')).toBe(
      false,
    );

    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-compression-'));
    const file = join(dir, 'config');
    writeFileSync(file, yaml('true'));
    expect(readKubeConfig(file, undefined).disableCompression).toBe(false);
    const chosen = readKubeConfig(file, 'in-cluster');
    expect(chosen.disableCompression).toBe(true);
    expect(chosen.kubeConfig.getCurrentCluster()?.name).toBe('near');
  });

  describe('through the bin', () => {
    let api: ApiServer;
    let kubeconfig: string;
    beforeEach(async () => {
      api = await startApiServer({ tls: true, token: 'emulator-token', bookmarkIntervalMs: 200 });
      const config = JSON.parse(api.kubeConfig.exportConfig()) as { clusters: { cluster: Record<string, unknown> }[] };
      for (const { cluster } of config.clusters) cluster['disable-compression'] = true;
      kubeconfig = join(mkdtempSync(join(tmpdir(), 'rx-informer-compression-')), 'config');
      writeFileSync(kubeconfig, JSON.stringify(config));
    });
    afterEach(async () => {
      killAll();
      await api.close();
    });

    /** The bin's requests, from start until its configmaps watch is open. */
    async function requestsOf(args: string[]): Promise<readonly RequestRecord[]> {
      api.clearRequests();
      const c = cli(['watch', 'configmaps', '--kubeconfig', kubeconfig, ...args]);
      await c.line('err', SYNCED);
      await api.waitForRequest((r) => r.watch && r.resource === 'configmaps', 10_000);
      c.proc.kill('SIGINT');
      expect((await c.exit).code).toBe(130);
      return [...api.requests];
    }

    it('disable-compression: true asks for no compression; --compression gzip wins over it', async () => {
      const none = await requestsOf([]);
      expect(none.some((r) => r.path === '/api')).toBe(true);
      expect(encodings(none)).toEqual(['(none)']);
      expect(encodings(await requestsOf(['--compression', 'gzip']))).toEqual(['gzip']);
    });
  });
});
