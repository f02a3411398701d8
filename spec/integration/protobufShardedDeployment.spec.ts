import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startApiServer } from 'rx-informer-emulator';
import { Deployment, type Store } from '../../src/index.ts';
import { shardOf } from '../../src/leaderelection/hash.ts';
import { protobufPair, snapshot, staticShards, until } from './protobufPair.ts';

/**
 * Issue #36: a sharded informer of Deployments (apps/v1, served from /apis/apps/v1/…) reading protobuf
 * (`http.encoding: 'protobuf'`) against the emulator keeps exactly the objects, deep-equal, that one reading JSON keeps,
 * over HTTP/1.1 and HTTP/2, gzipped, through a list and then watch events (added, modified, deleted; kept and
 * dropped shards), and it did ask and read protobuf. The Deployments are written as a real server stores them (every field
 * encoding/json always writes is present), with pod templates, strategy, status and conditions.
 */
const SHARDS = 3;
const DEPLOYMENTS = 45;
const HELD = new Set([1]);
const NAMESPACES = ['shop', 'payments', 'search'];

const namespaceOf = (index: number) => NAMESPACES[index % NAMESPACES.length]!;
const nameOf = (index: number) => `web-${index}`;
const keyOf = (index: number) => `${namespaceOf(index)}/${nameOf(index)}`;
const held = (index: number) => HELD.has(shardOf(keyOf(index), SHARDS));

/** Deployment `index` at `revision`, as a real server stores it (the emulator sets uid, resourceVersion, creationTimestamp, generation). */
function deployment(index: number, revision = 0) {
  const app = nameOf(index);
  const time = `2026-11-27T06:${String(index % 60).padStart(2, '0')}:00Z`;
  return {
    metadata: {
      name: app,
      namespace: namespaceOf(index),
      labels: { app, tier: index % 2 === 0 ? 'frontend' : 'backend' },
      annotations: { 'deployment.kubernetes.io/revision': String(revision + 1) },
    },
    spec: {
      replicas: 1 + (index % 4),
      selector: { matchLabels: { app } },
      template: {
        metadata: { creationTimestamp: null, labels: { app } },
        spec: {
          containers: [
            {
              name: 'web',
              image: `registry.example.com/${app}:1.${revision}`,
              ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
              env: [{ name: 'MODE', value: 'production' }],
              resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '250m', memory: '128Mi' } },
              readinessProbe: {
                httpGet: { path: '/ready', port: 'http', scheme: 'HTTP' },
                timeoutSeconds: 1,
                periodSeconds: 10,
                successThreshold: 1,
                failureThreshold: 3,
              },
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              imagePullPolicy: 'IfNotPresent',
            },
          ],
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
    status: {
      observedGeneration: 1,
      replicas: 1 + (index % 4),
      updatedReplicas: 1 + (index % 4),
      readyReplicas: 1 + (index % 4),
      availableReplicas: 1 + (index % 4),
      conditions: [
        {
          type: 'Available',
          status: 'True',
          lastUpdateTime: time,
          lastTransitionTime: time,
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        },
      ],
    },
  };
}

const pair = protobufPair(staticShards(SHARDS, HELD));

describe('a sharded Deployment informer over protobuf keeps exactly what one over JSON keeps', () => {
  it.each([
    ['HTTP/1.1', false],
    ['HTTP/2', true],
  ])('%s, gzipped', async (_name, h2) => {
    const api = (pair.api = await startApiServer({ namespaces: NAMESPACES, http2: h2, gzip: { minBytes: 0, watch: true } }));
    for (let i = 0; i < DEPLOYMENTS; i++) api.create('deployments', deployment(i));
    const expected = [...Array(DEPLOYMENTS).keys()].filter(held);
    expect(expected.length).toBeGreaterThan(5);
    expect(expected.length).toBeLessThan(DEPLOYMENTS - 5);
    const json = pair.follow(Deployment, 'json', api);
    const protobuf = pair.follow(Deployment, 'protobuf', api);
    const same = () => isDeepStrictEqual(snapshot(json.store()), snapshot(protobuf.store()));
    await until(() => json.store()?.size === expected.length && same(), 'both caches to list the same deployments');
    expect(snapshot(protobuf.store())).toStrictEqual(snapshot(json.store()));
    expect(Object.keys(snapshot(protobuf.store())).sort()).toEqual(expected.map(keyOf).sort());

    // Watch events: modify, delete and add deployments of every shard.
    for (let i = 0; i < 10; i++) api.update('deployments', deployment(i, 1));
    for (let i = 10; i < 15; i++) api.delete('deployments', namespaceOf(i), nameOf(i));
    for (let i = DEPLOYMENTS; i < DEPLOYMENTS + 10; i++) api.create('deployments', deployment(i));
    const expectedNow = [...expected.filter((i) => i < 10 || i >= 15), ...[...Array(10).keys()].map((i) => DEPLOYMENTS + i)].filter(held);
    const revision = (store: Store<Deployment> | undefined, i: number) =>
      store?.get(keyOf(i))?.metadata.annotations?.['deployment.kubernetes.io/revision'];
    const revised = () => [...Array(10).keys()].filter(held).every((i) => revision(json.store(), i) === '2');
    await until(() => json.store()?.size === expectedNow.length && revised() && same(), 'both caches to follow the watch');
    expect(snapshot(protobuf.store())).toStrictEqual(snapshot(json.store()));
    expect(Object.keys(snapshot(protobuf.store())).sort()).toEqual(expectedNow.map(keyOf).sort());

    // The protobuf informer asked protobuf; the JSON one asked JSON.
    const accepts = new Set(api.requests.filter((r) => r.resource === 'deployments').map((r) => r.accept));
    expect(accepts).toEqual(new Set(['application/json', 'application/vnd.kubernetes.protobuf, application/json']));
    // And it read protobuf: a field outside the schema (which no real server stores) reaches only the JSON informer.
    const mine = expectedNow[0]!;
    const marked = deployment(mine, 2);
    api.update('deployments', { ...marked, spec: { ...marked.spec, notInTheSchema: true } });
    const rv = (store: Store<Deployment> | undefined) => store?.get(keyOf(mine))?.metadata.resourceVersion;
    await until(() => rv(json.store()) === rv(protobuf.store()) && revision(protobuf.store(), mine) === '3', 'the marked update');
    expect(json.store()!.get(keyOf(mine))!.spec).toHaveProperty('notInTheSchema', true);
    expect(protobuf.store()!.get(keyOf(mine))!.spec).not.toHaveProperty('notInTheSchema');
  });
});
