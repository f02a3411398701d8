import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.ts';
import { toRecord } from '../../src/cli/record.ts';
import { watchCommand } from '../../src/cli/watch.ts';
import type { InformerEvent, KubeObject } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('watch --fields / --ignore / --metrics-port', () => {
  it('parses repeatable, comma-separated patterns and a port; refuses a bad pattern or port before any request', () => {
    const parsed = parseCommandLine([
      'watch',
      'pods',
      '--fields',
      'spec.**,metadata.labels',
      '--fields',
      'metadata.annotations["a,b"]',
      '--ignore',
      'status',
      '--metrics-port',
      '9090',
    ]);
    expect(parsed).toMatchObject({
      kind: 'run',
      options: { fields: ['spec.**', 'metadata.labels', 'metadata.annotations["a,b"]'], ignore: ['status'], metricsPort: 9090 },
    });
    expect(parseCommandLine(['watch', 'pods', '--fields', 'spec..x'])).toEqual({
      kind: 'usage',
      message: '--fields: "spec..x" is not a field pattern (e.g. spec.replicas, metadata.labels, spec.**, **.image)',
    });
    expect(parseCommandLine(['watch', 'pods', '--ignore', 'a[b'])).toMatchObject({
      kind: 'usage',
      message: expect.stringMatching(/^--ignore: "a\[b"/),
    });
    for (const port of ['-1', '70000', 'http', '1.5'])
      expect(parseCommandLine(['watch', 'pods', '--metrics-port', port]), port).toMatchObject({ kind: 'usage' });
    // --metrics-address: an IP (IPv6 bracketed or not) or a host name, and only with a port.
    expect(parseCommandLine(['watch', 'pods', '--metrics-port', '0', '--metrics-address', '127.0.0.1'])).toMatchObject({
      kind: 'run',
      options: { metricsPort: 0, metricsAddress: '127.0.0.1' },
    });
    expect(parseCommandLine(['watch', 'pods', '--metrics-port', '0', '--metrics-address', '[::1]'])).toMatchObject({
      options: { metricsAddress: '::1' },
    });
    expect(parseCommandLine(['watch', 'pods', '--metrics-port', '0', '--metrics-address', 'localhost'])).toMatchObject({
      options: { metricsAddress: 'localhost' },
    });
    expect(parseCommandLine(['watch', 'pods', '--metrics-port', '0'])).not.toHaveProperty('options.metricsAddress');
    for (const address of ['', 'a b', 'http://127.0.0.1', '127.0.0.1:9090', 'bad_host!', 'x.-y'])
      expect(parseCommandLine(['watch', 'pods', '--metrics-port', '0', '--metrics-address', address]), address).toMatchObject({
        kind: 'usage',
        message: expect.stringMatching(/^--metrics-address must be/),
      });
    expect(parseCommandLine(['watch', 'pods', '--metrics-address', '127.0.0.1'])).toEqual({
      kind: 'usage',
      message: '--metrics-address needs --metrics-port (the port to serve on)',
    });
  });

  it('diffs the chosen fields only, always leaving resourceVersion and managedFields out', () => {
    const pod = (rv: string, image: string, phase: string) =>
      ({
        metadata: { name: 'p', namespace: 'ns', resourceVersion: rv, managedFields: [{ m: rv }] },
        spec: { containers: [{ image }] },
        status: { phase },
      }) as KubeObject;
    const event: InformerEvent<KubeObject> = {
      type: 'updated',
      oldObject: pod('1', 'a', 'Pending'),
      object: pod('2', 'b', 'Running'),
      isInInitialList: false,
      resync: false,
    };
    const at = new Date(0);
    expect(toRecord('pods', event, at, { utc: true, ignore: ['status'] })?.diff).toEqual([
      { path: 'spec.containers[0].image', old: 'a', new: 'b' },
    ]);
    expect(toRecord('pods', event, at, { utc: true, fields: ['status'] })?.diff).toEqual([
      { path: 'status.phase', old: 'Pending', new: 'Running' },
    ]);
    expect(toRecord('pods', event, at, { utc: true, fields: ['metadata.**'] })).toBeUndefined();
  });

  describe('against the emulator', () => {
    let api: ApiServer;
    beforeEach(async () => {
      api = await startApiServer({ bookmarkIntervalMs: 50 });
      api.create('pods', { metadata: { name: 'web-1', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });
    });
    afterEach(async () => {
      await api.close();
    });

    it('serves /readyz and /metrics for its informers, and prints diffs of the chosen fields', async () => {
      const out: string[] = [];
      const err: string[] = [];
      const w = await watchCommand(
        api.kubeConfig,
        { resources: ['pods'], all: false, output: 'pretty', metricsPort: 0, metricsAddress: '127.0.0.1', fields: ['spec.**'] },
        { out: (l) => out.push(l), err: (l) => err.push(l) },
      );
      let port = 0;
      try {
        await w.synced;
        await until(() => err.some((l) => l.startsWith('serving ')));
        const serving = err.find((l) => l.startsWith('serving '))!;
        expect(serving).toMatch(/^serving \/healthz, \/readyz and \/metrics on 127\.0\.0\.1, port \d+$/);
        port = Number(/port (\d+)$/.exec(serving)![1]);
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
        expect(ready.status).toBe(200);
        expect(await ready.text()).toBe('[+]pods ok\nok\n');
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        expect(metrics).toContain('informer_store_objects{name="pods"} 1');
        api.patch('pods', 'shop', 'web-1', { metadata: { labels: { noise: 'yes' } } });
        api.patch('pods', 'shop', 'web-1', { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } });
        // One spec change more: events are printed in order, so a line for either change before it would show up before its own.
        api.patch('pods', 'shop', 'web-1', { spec: { containers: [{ name: 'c', image: 'nginx:3' }] } });
        await until(() => out.length >= 2);
        // Watching: the server has sent events on the watch. A scrape within 1 s of the last render gets its text
        // (METRICS_CACHE_MS, real time here): scraped again until it shows.
        const watching = 'informer_watching{name="pods"} 1';
        let latest = '';
        for (const deadline = Date.now() + 20_000; !latest.includes(watching) && Date.now() < deadline;) {
          latest = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          if (!latest.includes(watching)) await new Promise((r) => setTimeout(r, 100));
        }
        expect(latest).toContain(watching);
        expect(out).toEqual([
          expect.stringMatching(/UPDATED pods shop\/web-1  spec\.containers\[0\]\.image: "nginx:1" → "nginx:2"$/),
          expect.stringMatching(/UPDATED pods shop\/web-1  spec\.containers\[0\]\.image: "nginx:2" → "nginx:3"$/),
        ]);
      } finally {
        w.stop();
      }
      // Stopping the watch closes the server.
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    });

    it("a metrics port that cannot be bound is an error before anything is watched (a pod's probes would fail silently)", async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as AddressInfo).port;
      const podRequests = () => api.requests.filter((r) => r.resource === 'pods').length;
      try {
        const err: string[] = [];
        await expect(
          watchCommand(
            api.kubeConfig,
            { resources: ['pods'], all: false, output: 'pretty', metricsPort: port, metricsAddress: '127.0.0.1' },
            { out: () => {}, err: (l) => err.push(l) },
          ),
        ).rejects.toThrow(
          new RegExp(`^cannot serve metrics on port ${port} of 127\\.0\\.0\\.1: .*EADDRINUSE.*choose another --metrics-port`),
        );
        expect(err.filter((l) => /metrics/.test(l))).toEqual([]);
        expect(podRequests()).toBe(0);
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });
  });
});
