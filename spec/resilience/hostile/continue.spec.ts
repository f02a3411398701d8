/**
 * A hostile server's continue chains, over real HTTP: one that always returns
 * another page, one that repeats its token. Each is reported as `ListTooLong`,
 * the informer survives and lists again, and memory stays bounded while the
 * server keeps sending (the dropped list's objects are garbage at once).
 * The timing of the relist (after the backoff) is tested in virtual time, at
 * default options, in marbles/2-source/continueChain.spec.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, informer, type InformerError } from '../../../src/index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server?.closeAllConnections();
  server = undefined;
});

interface Hostile {
  readonly kubeConfig: KubeConfig;
  /** List requests so far, and how many of them started a new list (no continue token). */
  readonly lists: { total: number; fresh: number };
}

/** A server whose every list page (of `limit` ConfigMaps) carries a continue token: `t<n>`, or always `same`. */
async function hostile(token: 'endless' | 'repeat'): Promise<Hostile> {
  const lists = { total: 0, fresh: 0 };
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.searchParams.get('watch') === 'true') return void response.writeHead(500).end();
    lists.total++;
    if (!url.searchParams.has('continue')) lists.fresh++;
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 500), 500);
    const items = Array.from({ length: limit }, (_, i) => ({
      metadata: { name: `cm-${lists.total}-${i}`, namespace: 'default', resourceVersion: '10' },
      data: { k: 'v' },
    }));
    const next = token === 'endless' ? `t${lists.total}` : 'same';
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '10', continue: next }, items }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'hostile', server: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'hostile' }],
    contexts: [{ name: 'hostile', cluster: 'hostile', user: 'hostile' }],
    currentContext: 'hostile',
  });
  return { kubeConfig, lists };
}

function heapAfterGc(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

const MiB = 1024 * 1024;

describe('hostile continue chains (real HTTP)', () => {
  it.each([
    ['endless', 'a server that always returns another page', /past maxListPages 100 \(100 pages, 50,000 objects\)/],
    ['repeat', 'a server that repeats its continue token', /repeated a continue token \(after 2 pages, 1,000 objects\)/],
  ] as const)(
    '%s: %s is ListTooLong, relisted, with bounded memory',
    async (mode, _what, message) => {
      const before = heapAfterGc();
      const api = await hostile(mode);
      // 100 pages of 500 (not the default 10,000) keeps the test short; the default is tested in virtual time.
      const cms = informer(api.kubeConfig, ConfigMap, { maxListPages: 100, backoff: { initialMs: 20, maxMs: 40 } });
      const errors: InformerError[] = [];
      const heaps: number[] = [];
      const subscription = cms.errors$.subscribe((error) => {
        errors.push(error);
        if (error.reason === 'ListTooLong') heaps.push(heapAfterGc() - before);
      });
      const synced = cms.synced$.subscribe();
      try {
        const deadline = Date.now() + 20_000;
        while (heaps.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      } finally {
        subscription.unsubscribe();
        synced.unsubscribe();
      }
      expect(
        errors.filter((e) => e.reason !== 'ListTooLong'),
        'only ListTooLong',
      ).toEqual([]);
      expect(heaps.length, 'three chains were dropped').toBeGreaterThanOrEqual(3);
      expect(errors[0]?.message).toMatch(message);
      expect(errors[0]?.phase).toBe('list');
      // Each dropped chain starts a fresh list (no continue token): the informer goes on.
      expect(api.lists.fresh).toBeGreaterThanOrEqual(3);
      // A chain holds at most 100 pages (50,000 small objects, about 25 MiB); the heap stays within a
      // fixed budget however many chains the server sends: nothing is kept from a dropped one.
      for (const heap of heaps) expect(heap).toBeLessThan(96 * MiB);
    },
    30_000,
  );
});
