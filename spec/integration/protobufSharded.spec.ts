import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApiServer } from 'rx-informer-emulator';
import { Pod, type Store } from '../../src/index.ts';
import { shardOf } from '../../src/leaderelection/hash.ts';
import { makePod, podNamespace } from '../../bench/workload/pods.ts';
import { protobufPair, snapshot, staticShards, until } from './protobufPair.ts';

/**
 * Issue #36 step 2: a sharded informer reading protobuf (`http.encoding: 'protobuf'`) against the emulator keeps
 * exactly the objects, deep-equal, that one reading JSON keeps, over HTTP/1.1 and HTTP/2, gzipped, through a list
 * and then watch events (added, modified, deleted; kept and dropped shards). The bench workload's pods are realistic
 * (containers, resources, probes, volumes, managedFields, status).
 */
const SHARDS = 3;
const PODS = 60;
const HELD = new Set([0]);

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

const pair = protobufPair(staticShards(SHARDS, HELD));

describe('a sharded informer over protobuf keeps exactly what one over JSON keeps', () => {
  it.each([
    ['HTTP/1.1', false],
    ['HTTP/2', true],
  ])('%s, gzipped', async (_name, h2) => {
    const api = (pair.api = await startApiServer({ namespaces, http2: h2, gzip: { minBytes: 0, watch: true } }));
    for (let i = 0; i < PODS; i++) api.create('pods', pod(i));
    const expected = [...Array(PODS).keys()].filter(held);
    const json = pair.follow(Pod, 'json', api);
    const protobuf = pair.follow(Pod, 'protobuf', api);
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
