import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { watchCommand, type Watching } from '../../src/cli/watch.ts';
import { MY_APPLES, startApiServer, type ApiServer } from 'rx-informer-emulator';
import { parseExposition, type ParsedFamily } from './exposition.ts';

/**
 * `/metrics` and `/readyz` of the CLI's probe server in the shapes that used to repeat series: one informer per
 * namespace (`watch configmaps pods -n a,b`) and `watch --all` (the dynamic factory's own CRD informer beside the
 * watched one; a resource given up on).
 */
async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function collector() {
  const err: string[] = [];
  return { err, terminal: { out: () => undefined, err: (l: string) => err.push(l) } };
}

async function probeUrl(err: string[]): Promise<string> {
  await until(() => err.some((l) => l.startsWith('serving ')));
  const port = /port (\d+)$/.exec(err.find((l) => l.startsWith('serving '))!)![1];
  return `http://127.0.0.1:${port}`;
}

const sample = (families: ParsedFamily[], family: string, labels: Record<string, string>) =>
  families.find((f) => f.name === family)?.samples.filter((s) => JSON.stringify(s.labels) === JSON.stringify(labels));

describe('the CLI probe server on the emulator: one series per label set, readiness of what is watched', () => {
  let api: ApiServer;
  let w: Watching | undefined;
  beforeEach(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 50 });
    api.registerCustomResource(MY_APPLES);
    for (const ns of ['a', 'b']) api.create('configmaps', { metadata: { name: `settings-${ns}`, namespace: ns }, data: { x: ns } });
    api.create('configmaps', { metadata: { name: 'more', namespace: 'b' }, data: { x: '2' } });
    api.create('pods', { metadata: { name: 'web', namespace: 'a' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
  });
  afterEach(async () => {
    w?.stop();
    w = undefined;
    await api.close();
  });

  it('watch configmaps pods -n a,b: every family once, each resource one series (its namespaces summed)', async () => {
    const t = collector();
    w = await watchCommand(
      api.kubeConfig,
      {
        resources: ['configmaps', 'pods'],
        all: false,
        namespaces: ['a', 'b'],
        output: 'pretty',
        metricsPort: 0,
        metricsAddress: '127.0.0.1',
      },
      t.terminal,
    );
    await w.synced;
    const url = await probeUrl(t.err);
    const families = parseExposition(await (await fetch(`${url}/metrics`)).text());
    expect(sample(families, 'informer_store_objects', { name: 'configmaps' })).toEqual([
      { name: 'informer_store_objects', labels: { name: 'configmaps' }, value: 3 },
    ]);
    expect(sample(families, 'informer_store_objects', { name: 'pods' })?.map((s) => s.value)).toEqual([1]);
    expect(sample(families, 'informer_synced', { name: 'configmaps' })?.map((s) => s.value)).toEqual([1]);
    const ready = await fetch(`${url}/readyz`);
    expect({ status: ready.status, body: await ready.text() }).toEqual({ status: 200, body: '[+]configmaps ok\n[+]pods ok\nok\n' });
  });

  it('watch --all: every family once (the CRD informers too); a resource given up on (404) leaves /readyz', async () => {
    const gone = api.faults.add({
      match: { resource: 'leases' },
      times: Infinity,
      fault: { type: 'status', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' },
    });
    const t = collector();
    w = await watchCommand(
      api.kubeConfig,
      { resources: [], all: true, output: 'pretty', metricsPort: 0, metricsAddress: '127.0.0.1' },
      t.terminal,
    );
    try {
      await w.synced;
      expect(t.err.filter((l) => l.startsWith('!'))).toEqual([
        '! not watching leases.coordination.k8s.io: not found (404): the server could not find the requested resource',
      ]);
      const url = await probeUrl(t.err);
      const text = await (await fetch(`${url}/metrics`)).text();
      const families = parseExposition(text);
      expect(text).not.toContain('# left out');
      const crds = 'customresourcedefinitions.apiextensions.k8s.io';
      expect(sample(families, 'informer_synced', { name: crds })?.map((s) => s.value)).toEqual([1]);
      expect(sample(families, 'informer_synced', { name: 'leases.coordination.k8s.io' })).toEqual([]);
      const ready = await fetch(`${url}/readyz`);
      const body = await ready.text();
      expect(ready.status).toBe(200);
      expect(body).not.toContain('leases');
      const lines = body.trimEnd().split('\n');
      expect(new Set(lines).size).toBe(lines.length);
      expect(lines.at(-1)).toBe('ok');
    } finally {
      gone.remove();
    }
  });
});
