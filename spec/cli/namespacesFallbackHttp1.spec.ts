/**
 * The 403 fallback over HTTP/1.1 (#31.5): a user who may not list the cluster watches 2,000 namespaces
 * on a server without HTTP/2, under a low `ulimit -n`. One watch per namespace would need 2,000 sockets;
 * the fallback's lists and watches take turns at a bounded set of connections instead
 * (src/5-informer/connectionTurns.ts, docs/transport.md › Many namespaces), so the bin syncs, sees changes,
 * and says next to nothing on stderr: no EMFILE storm.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { DEFAULT_HTTP1_CONNECTIONS } from '../../src/5-informer/connectionTurns.ts';
import { cli, killAll, type Cli } from './support.ts';

const SYNCED = /^synced \d+ resources?, \d+ objects? in \d+ ms/;
const NAMESPACES = Array.from({ length: 2000 }, (_, i) => `ns-${String(i).padStart(4, '0')}`);

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});
afterAll(() => killAll());

/** The emulator over TLS without HTTP/2, a ConfigMap in each of 2,000 namespaces, cluster-wide lists forbidden; the bin under `ulimit -n`. */
async function run(maxOpenFiles: number, check: (c: Cli, server: ApiServer, peak: () => number) => Promise<void>): Promise<void> {
  // Kept-alive connections stay open a minute: a bin stalled for seconds on a loaded machine would otherwise race
  // Node's 5 s close when it reuses one ("socket hang up", a line each), which is not what this test is about.
  api = await startApiServer({ tls: true, namespaces: NAMESPACES, keepAliveTimeoutMs: 60_000 });
  const server = api;
  for (const ns of NAMESPACES) server.create('configmaps', { metadata: { name: 'settings', namespace: ns }, data: { ns } });
  const forbidden = server.faults.add({
    match: { resource: 'configmaps', predicate: (q) => q.namespace === undefined },
    times: Infinity,
    fault: {
      type: 'status',
      code: 403,
      reason: 'Forbidden',
      message: 'User "ns-admin" cannot list resource "configmaps" at the cluster scope',
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-fallback-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, server.kubeConfig.exportConfig());
  const c = cli(['watch', 'configmaps', '-n', NAMESPACES.join(','), '--kubeconfig', kubeconfig], {}, { maxOpenFiles });
  let peak = 0;
  const sample = setInterval(() => (peak = Math.max(peak, server.openConnections)), 5);
  try {
    const line = await c.line('err', SYNCED, 90_000);
    expect(line).toMatch(/^synced 1 resource, 2000 objects/);
    expect(forbidden.hits).toBe(1);
    await check(c, server, () => peak);
  } finally {
    clearInterval(sample);
    c.proc.kill('SIGTERM');
    await c.exit;
  }
}

describe('the per-namespace fallback over HTTP/1.1', () => {
  it('2,000 namespaces, cluster-wide list forbidden, HTTP/1.1 only, `ulimit -n 256`: syncs, sees changes, a bounded number of connections, ≤ 10 stderr lines', async () => {
    await run(256, async (c, server, peak) => {
      // Every namespace listed once: nothing failed and was listed again.
      const lists = server.requests.filter((r) => r.resource === 'configmaps' && !r.watch && r.namespace !== undefined);
      expect(lists).toHaveLength(2000);
      // A change is seen in the namespace's turn at a watch, which resumes from its resourceVersion: the first
      // 64 namespaces' watches run first, so the 101st's comes after at least one round of turns.
      server.create('configmaps', { metadata: { name: 'late', namespace: NAMESPACES[100] } });
      await c.line('out', new RegExp(`${NAMESPACES[100]}/late`), 120_000);
      expect(c.raw()).not.toMatch(/EMFILE|too many open files/);
      expect(c.err.length).toBeLessThanOrEqual(10);
      // The turns' connections, and the one the forbidden list and discovery used.
      expect(peak()).toBeLessThanOrEqual(DEFAULT_HTTP1_CONNECTIONS + 2);
    });
  }, 240_000);

  it('`ulimit -n 64`, fewer descriptors than the turns would use: one line says so, and it syncs on fewer connections', async () => {
    await run(64, async (c) => {
      expect(c.err.filter((l) => /EMFILE|too many open files/.test(l))).toHaveLength(1);
      expect(c.err.find((l) => /EMFILE/.test(l))).toMatch(
        /^! configmaps in 2000 namespaces: cannot open a connection .*: too many open files: .*ulimit -n/,
      );
      expect(c.err.length).toBeLessThanOrEqual(10);
    });
  }, 120_000);
});
