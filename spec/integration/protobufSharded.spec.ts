import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { EMPTY, from, of, Subscription } from 'rxjs';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { Pod, shardedInformer, type Store } from '../../src/index.ts';
import type { ShardSource } from '../../src/pipeline.ts';
import type { Encoding } from '../../src/pipeline.ts';
import { shardOf } from '../../src/leaderelection/hash.ts';
import { makePod, podNamespace } from '../../bench/workload/pods.ts';

/**
 * Issue #36 step 2: a sharded informer reading protobuf (`http.encoding: 'protobuf'`) against the emulator keeps
 * exactly the objects, deep-equal, that one reading JSON keeps, over HTTP/1.1 and HTTP/2, gzipped, through a list
 * and then watch events (added, modified, deleted; kept and dropped shards). The bench workload's pods are realistic
 * (containers, resources, probes, volumes, managedFields, status).
 */
const SHARDS = 3;
const PODS = 60;
const HELD = new Set([0]);

const staticShards: ShardSource = {
  shards: SHARDS,
  shardOf: (key) => shardOf(key, SHARDS),
  held$: of(HELD),
  owns: (key) => HELD.has(shardOf(key, SHARDS)),
  gate: (key, work) => (HELD.has(shardOf(key, SHARDS)) ? from(work()) : EMPTY),
};

/** Polls `check` until it holds (the assertion is the condition; the deadline only ends a hung test). */
async function until(check: () => boolean, what: string, deadlineMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
const namespaces = [...new Set(Array.from({ length: PODS + 10 }, (_, i) => podNamespace(i)))];
/** Pod `index` of the bench workload, as written (the server sets uid, resourceVersion and creationTimestamp). */
const pod = (index: number, revision = 0) => {
  const {
    kind: _k,
    apiVersion: _a,
    metadata,
    ...rest
  } = makePod({ index, resourceVersion: 1, revision }) as { kind: string; apiVersion: string; metadata: Record<string, unknown> };
  const { uid: _u, resourceVersion: _r, ...meta } = metadata;
  return { metadata: meta as { name: string; namespace: string }, ...rest };
};
const keyOf = (index: number) => `${podNamespace(index)}/${pod(index).metadata.name}`;
const held = (index: number) => HELD.has(shardOf(keyOf(index), SHARDS));

let api: ApiServer | undefined;
let running = new Subscription();
afterEach(async () => {
  running.unsubscribe();
  running = new Subscription();
  await api?.close();
  api = undefined;
});

function follow(encoding: Encoding, server: ApiServer): { store: () => Store<Pod> | undefined } {
  let store: Store<Pod> | undefined;
  const informer = shardedInformer(server.kubeConfig, Pod, staticShards, {
    http: { encoding, protocol: server.http2 ? 'h2' : 'http1', compression: 'gzip' },
  });
  running.add(informer.store$.subscribe((s) => (store = s)));
  return { store: () => store };
}

function snapshot(store: Store<Pod> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of store?.keys() ?? []) out[key] = plain(store!.get(key));
  return out;
}

describe('a sharded informer over protobuf keeps exactly what one over JSON keeps', () => {
  it.each([
    ['HTTP/1.1', false],
    ['HTTP/2', true],
  ])('%s, gzipped', async (_name, h2) => {
    api = await startApiServer({ namespaces, http2: h2, gzip: { minBytes: 0, watch: true } });
    for (let i = 0; i < PODS; i++) api.create('pods', pod(i));
    const expected = [...Array(PODS).keys()].filter(held);
    const json = follow('json', api);
    const protobuf = follow('protobuf', api);
    // Deep equality, key order aside (protobuf sorts map keys and writes struct fields in Go order, as a real server's JSON does).
    const same = () => isDeepStrictEqual(snapshot(json.store()), snapshot(protobuf.store()));
    await until(() => json.store()?.size === expected.length && same(), 'both caches to list the same pods');
    expect(snapshot(protobuf.store())).toStrictEqual(snapshot(json.store()));

    // Watch events: modify, delete and add pods of every shard.
    for (let i = 0; i < 10; i++) api.update('pods', pod(i, 1));
    for (let i = 10; i < 15; i++) api.delete('pods', podNamespace(i), pod(i).metadata.name);
    for (let i = PODS; i < PODS + 10; i++) api.create('pods', pod(i));
    const expectedNow = [...expected.filter((i) => i < 10 || i >= 15), ...[...Array(10).keys()].map((i) => PODS + i)].filter(held);
    const revision = (store: Store<Pod> | undefined, i: number) =>
      store?.get(keyOf(i))?.metadata.annotations?.['bench.rx-informer.dev/revision'];
    const revised = () => [...Array(10).keys()].filter(held).every((i) => revision(json.store(), i) === '1');
    await until(() => json.store()?.size === expectedNow.length && revised() && same(), 'both caches to follow the watch');
    expect(snapshot(protobuf.store())).toStrictEqual(snapshot(json.store()));

    // The protobuf informer asked protobuf (and the emulator answered it); the JSON one asked JSON.
    const accepts = new Set(api.requests.filter((r) => r.resource === 'pods').map((r) => r.accept));
    expect(accepts).toEqual(new Set(['application/json', 'application/vnd.kubernetes.protobuf, application/json']));
  });
});
