import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { UsageError, watchCommand, type EventRecord } from '../../src/cli/watch.ts';
import { MY_APPLES, startApiServer, type ApiServer } from '../../src/testing/index.ts';

const execFileAsync = promisify(execFile);

/** Runs a command and returns its exit code and stderr, whether it failed or not. */
async function run(command: string, args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await execFileAsync(command, args);
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

function collector() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, terminal: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('rx-informer watch against the emulator', () => {
  let api: ApiServer;
  beforeEach(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 50 });
    api.registerCustomResource(MY_APPLES);
    api.create('pods', { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });
  });
  afterEach(async () => {
    await api.close();
  });

  it('resolves names through discovery, shows sync, then one line per change with a compact diff', async () => {
    const t = collector();
    const w = await watchCommand(api.kubeConfig, { resources: ['po', 'ma'], all: false, output: 'pretty' }, t.terminal);
    try {
      await w.synced;
      expect(t.err.some((l) => l.startsWith('synced pods: 1 objects'))).toBe(true);
      expect(t.err.some((l) => /^synced 2 resources, 1 objects in \d+ ms/.test(l))).toBe(true);
      expect(t.out).toEqual([]); // the initial list is summarised, not printed
      api.patch('pods', 'shop', 'web-1', { metadata: { labels: { app: 'web', tier: 'fe' } }, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } });
      api.create('myapples.stable.example.com', { apiVersion: 'stable.example.com/v1', kind: 'MyApple', metadata: { name: 'red', namespace: 'fruit' }, spec: { color: 'red', quantity: 2 } });
      api.delete('pods', 'shop', 'web-1');
      await until(() => t.out.length >= 3);
      // Each resource has its own connection: order holds per resource, not across them.
      const pods = t.out.filter((l) => l.includes(' pods '));
      expect(pods[0]).toMatch(/^\d\d:\d\d:\d\d UPDATED pods shop\/web-1  metadata\.labels\.tier: \+"fe", spec\.containers\[0\]\.image: "nginx:1" → "nginx:2"$/);
      expect(pods[1]).toMatch(/DELETED pods shop\/web-1$/);
      expect(t.out.filter((l) => l.includes('myapples'))).toEqual([expect.stringMatching(/ADDED   myapples\.stable\.example\.com fruit\/red$/)]);
      expect(t.out.join('\n')).not.toContain('resourceVersion');
    } finally {
      await w.stop();
    }
  });

  it('--all watches every listable resource, custom resources included; --output json prints records', async () => {
    const t = collector();
    const w = await watchCommand(api.kubeConfig, { resources: [], all: true, output: 'json', namespace: 'shop' }, t.terminal);
    try {
      await w.synced;
      const synced = t.err.filter((l) => l.startsWith('synced ') && l.includes(':')).map((l) => l.slice(7, l.indexOf(':')));
      expect(synced).toEqual(expect.arrayContaining(['pods', 'configmaps', 'deployments.apps', 'leases.coordination.k8s.io', 'myapples.stable.example.com']));
      api.create('configmaps', { metadata: { name: 'cfg', namespace: 'shop' }, data: { a: '1' } });
      api.create('configmaps', { metadata: { name: 'elsewhere', namespace: 'other' }, data: { a: '1' } });
      api.patch('configmaps', 'shop', 'cfg', { data: { a: '2' } });
      const records = () => t.out.map((l) => JSON.parse(l) as EventRecord).filter((r) => r.resource === 'configmaps');
      await until(() => records().length >= 2);
      // Namespaces are cluster-scoped, so the namespace "other" (created on the way) is seen too; its configmap is not.
      expect(t.out.map((l) => JSON.parse(l) as EventRecord).some((r) => r.resource === 'namespaces' && r.name === 'other')).toBe(true);
      expect(records().map((r) => [r.type, r.resource, r.namespace, r.name])).toEqual([
        ['ADDED', 'configmaps', 'shop', 'cfg'],
        ['UPDATED', 'configmaps', 'shop', 'cfg'],
      ]);
      expect(records()[1]?.diff).toEqual([{ path: 'data.a', old: '1', new: '2' }]);
    } finally {
      await w.stop();
    }
  });

  it('posts each event to --webhook, and reports failed deliveries without blocking the watch', async () => {
    const received: unknown[] = [];
    let failNext = 1;
    const hook = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (failNext-- > 0) {
          res.writeHead(500).end();
          return;
        }
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/events`;
    const t = collector();
    const w = await watchCommand(api.kubeConfig, { resources: ['configmaps'], all: false, output: 'pretty', webhook: url }, t.terminal);
    try {
      await w.synced;
      api.create('configmaps', { metadata: { name: 'a', namespace: 'default' } });
      api.create('configmaps', { metadata: { name: 'b', namespace: 'default' } });
      await until(() => received.length >= 2, 10_000);
      expect(received.map((r) => (r as EventRecord).name)).toEqual(['a', 'b']);
      expect(t.err.some((l) => l.includes('webhook') && l.includes('attempt 1/5 failed (HTTP 500)'))).toBe(true);
      expect(t.out).toHaveLength(2);
    } finally {
      await w.stop();
      hook.closeAllConnections();
      await new Promise((r) => hook.close(r));
    }
  });

  it('says clearly when a resource is unknown or the server unreachable', async () => {
    const t = collector();
    await expect(watchCommand(api.kubeConfig, { resources: ['nope'], all: false, output: 'pretty' }, t.terminal)).rejects.toThrow(
      new UsageError(`the server doesn't have a resource type "nope"`),
    );
    const dead = new KubeConfig();
    dead.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    await expect(watchCommand(dead, { resources: ['pods'], all: true, output: 'pretty' }, t.terminal)).rejects.toThrow(/cannot reach the API server at http:\/\/127\.0\.0\.1:1/);
  });

  it('says clearly when credentials are rejected', async () => {
    const guarded = await startApiServer({ token: 'right' });
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: guarded.url, skipTLSVerify: true }],
        users: [{ name: 'u', token: 'wrong' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      await expect(watchCommand(kc, { resources: ['pods'], all: false, output: 'pretty' }, collector().terminal)).rejects.toThrow(/rejected our credentials \(401 Unauthorized\)/);
    } finally {
      await guarded.close();
    }
  });

  it('the bin: a bad kubeconfig and a bad flag are one-line errors with exit codes, not stack traces', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-'));
    const node = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
    const main = new URL('../../src/cli/main.ts', import.meta.url).pathname;
    const missing = await run(node, [main, 'watch', 'pods', '--kubeconfig', join(dir, 'missing')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: cannot load kubeconfig .*missing/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    const badFlag = await run(node, [main, 'watch', '--colour']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/Unknown option '--colour'/);
    // A kubeconfig file for the emulator, and a context that does not exist.
    const file = join(dir, 'config');
    writeFileSync(file, api.kubeConfig.exportConfig());
    const noContext = await run(node, [main, 'watch', 'pods', '--kubeconfig', file, '--context', 'nope']);
    expect(noContext.code).toBe(1);
    expect(noContext.stderr).toMatch(/the kubeconfig has no context "nope"/);
  });
});
