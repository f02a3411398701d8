/**
 * What the docs say of client-node 2.x's `makeInformer`, checked against it (audit19, finding 7): a silent watch is
 * aborted after its `requestTimeoutMs` (30 s by default) and resumed, not waited on forever (README's comparison), and
 * `connect` fires before every list and watch it opens, so it is no sync point (docs/migrating.md: `await start()`
 * is). The abort is timed by client-node's own timer: it runs at 1/100 of its default here (the emulator's watch
 * has no timing of its own, so the one scale factor is the client's); nothing is asserted about time.
 */
import { readFileSync } from 'node:fs';
import { CoreV1Api, makeInformer, Watch } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { sleep } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** client-node's Watch with its (private) timeout. */
interface TimedWatch {
  requestTimeoutMs: number;
}

const doc = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const row = (text: string, starts: string) => text.split('\n').find((line) => line.startsWith(starts)) ?? '';

describe("client-node's makeInformer, as the docs describe it", () => {
  it('a silent watch is aborted after requestTimeoutMs and resumed from its resourceVersion; connect fires before each', async () => {
    // Private in client-node's types, public at run time: the one knob of its watch's abort.
    expect((new Watch(undefined as never) as unknown as TimedWatch).requestTimeoutMs).toBe(30_000);
    api = await startApiServer();
    api.create('pods', { metadata: { name: 'pod-1', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    const core = api.kubeConfig.makeApiClient(CoreV1Api);
    let lists = 0;
    const informer = makeInformer(api.kubeConfig, '/api/v1/namespaces/default/pods', () => {
      lists++;
      return core.listNamespacedPod({ namespace: 'default' });
    });
    (informer as unknown as { watch: TimedWatch }).watch.requestTimeoutMs = 300; // 30 s / 100
    let connects = 0;
    const errors: unknown[] = [];
    informer.on('connect', () => connects++);
    informer.on('error', (error) => errors.push(error));
    await informer.start();
    expect(lists).toBe(1); // start() resolved after the first list
    const watches = () => api!.requests.filter((r) => r.watch && r.resource === 'pods').length;
    for (let i = 0; i < 3000 && watches() < 3; i++) await sleep(10); // a deadline for a hung test only
    await informer.stop();
    expect(watches()).toBeGreaterThanOrEqual(3);
    expect(errors).toEqual([]); // the abort is no error: it reconnects by itself
    expect(lists).toBe(1); // resumed, not relisted
    expect(connects).toBeGreaterThanOrEqual(3); // once before each watch it opened
  });

  it('the docs say so', () => {
    const hung = row(doc('README.md'), '| hung watch, dead connection |');
    expect(hung).toMatch(/\| a watch resumed after 30 s silent; a hung list waits forever \|/);
    const connect = row(doc('docs/migrating.md'), "| `on('connect', cb)`");
    expect(connect).toMatch(/fires before \*\*every\*\* list and watch/);
    expect(connect).not.toMatch(/synced\$/);
    expect(row(doc('docs/migrating.md'), '| `await start()`')).toMatch(/`synced\$`.*`waitForCacheSync/);
  });
});
