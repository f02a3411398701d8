import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { protobufFrame, protobufList, protobufObject, protobufStatus } from '../../packages/emulator/src/protobuf/bodies.ts';
import { decodeListBody, decodeObjectBody, decodeWatchFrame } from '../../src/1-transport/protobuf/decode.ts';
import { FrameSplitter } from '../../src/1-transport/protobuf/frames.ts';
import { APPLES } from './helpers.ts';

/**
 * The emulator speaks Kubernetes' protobuf (issue #36) for the built-in kinds its schema knows (core/v1, apps/v1,
 * coordination.k8s.io/v1): its bodies
 * are a real kube-apiserver v1.20.2's byte for byte where the recordings (spec/fixtures/protobuf) overlap, and over
 * HTTP it answers protobuf to `Accept: application/vnd.kubernetes.protobuf` (lists, watches, errors), 406 to a custom
 * resource asked protobuf only, JSON to a custom resource asked `protobuf, application/json`.
 */
const fixtures = join(import.meta.dirname, '../fixtures/protobuf');
const bin = (name: string) => readFileSync(join(fixtures, `${name}.bin`));
const json = (name: string): any => JSON.parse(bin(name).toString('utf8'));
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

function frames(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  new FrameSplitter(1 << 24).push(body, { frame: (f) => out.push(Buffer.from(f)), oversize: () => expect.fail('oversize') });
  return out;
}

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

interface Raw {
  readonly status: number;
  readonly type: string;
  readonly body: Buffer;
}

/** One GET over a fresh connection, its body as bytes (gunzipped when gzipped). */
function get(path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, api!.url), { headers: { 'User-Agent': 'protobuf-spec', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe("the emulator's protobuf bodies against the recordings", () => {
  it.each([
    ['10a-list-pods-protobuf', '10b-list-pods-json-same-rv', 'pods'],
    ['10a-list-configmaps-protobuf', '10b-list-configmaps-json-same-rv', 'configmaps'],
  ])('writes %s byte for byte from its JSON twin', (protobuf, twin, plural) => {
    const list = json(twin);
    const def = { builtin: true, apiVersion: 'v1', listKind: list.kind, kind: list.kind.replace(/List$/, ''), plural } as never;
    expect(protobufList(def, list.metadata, list.items).equals(bin(protobuf))).toBe(true);
  });

  it('writes the 404 Status of 10f and every watch frame of 11a and 11b byte for byte', () => {
    expect(protobufStatus(decodeObjectBody(bin('10f-get-missing-protobuf')) as never).equals(bin('10f-get-missing-protobuf'))).toBe(true);
    for (const name of ['11a-watch-configmaps-protobuf', '11b-watch-rv1-too-old-410-protobuf']) {
      const written = frames(bin(name)).map((frame) => {
        const { type, object } = decodeWatchFrame(frame, undefined);
        return Buffer.from(protobufFrame(type, JSON.parse(JSON.stringify(object))), 'latin1');
      });
      expect(Buffer.concat(written).equals(bin(name))).toBe(true);
    }
  });

  it("writes one object's body as a real server embeds it in a watch event (11a; no single GET was recorded)", () => {
    // A GET body and a watch event's object are the same serializer's output (`k8s\0` + Unknown): in 11a, each
    // frame ends with its object's bytes (RawExtension is WatchEvent's last field, raw its only one).
    const recorded = frames(bin('11a-watch-configmaps-protobuf'));
    expect(recorded.length).toBeGreaterThan(3);
    for (const frame of recorded) {
      const body = protobufObject(JSON.parse(JSON.stringify(decodeWatchFrame(frame, undefined).object)));
      expect(body.subarray(0, 4).toString('latin1')).toBe('k8s\0');
      expect(frame.subarray(frame.length - body.length).equals(body)).toBe(true);
    }
  });

  it("uses the same generated schema as the library's decoder (the two packages import nothing of each other)", () => {
    const read = (path: string) => readFileSync(join(import.meta.dirname, '../..', path), 'utf8');
    expect(read('packages/emulator/src/protobuf/schema.generated.ts')).toBe(read('src/1-transport/protobuf/schema.generated.ts'));
    expect(read('packages/emulator/src/protobuf/schema.ts').split('\n').slice(3)).toEqual(
      read('src/1-transport/protobuf/schema.ts').split('\n').slice(3),
    );
  });
});

async function server(gzip = false): Promise<ApiServer> {
  const s = await startApiServer({ namespaces: ['ns'], resources: [APPLES], gzip: gzip ? { minBytes: 0, watch: true } : false });
  for (const name of ['cm-1', 'cm-2', 'cm-3'])
    s.create('configmaps', { metadata: { name, namespace: 'ns', labels: { app: name } }, data: { key: `value of ${name}` } });
  s.create('apples', { apiVersion: 'pb.example.com/v1', kind: 'Apple', metadata: { name: 'a', namespace: 'ns' } });
  return s;
}

describe('the emulator over HTTP, asked protobuf', () => {
  it.each([false, true])('lists a core/v1 kind in protobuf that decodes to its JSON list (gzip %s)', async (gzip) => {
    api = await server(gzip);
    const asJson = await get('/api/v1/namespaces/ns/configmaps', { Accept: 'application/json' });
    const pb = await get('/api/v1/namespaces/ns/configmaps', { Accept: `${PROTOBUF}, application/json`, 'Accept-Encoding': 'gzip' });
    expect([pb.status, pb.type]).toEqual([200, PROTOBUF]);
    expect(JSON.parse(JSON.stringify(decodeListBody(pb.body, undefined)))).toStrictEqual(JSON.parse(asJson.body.toString()));
    const page = await get('/api/v1/namespaces/ns/configmaps?limit=2', { Accept: PROTOBUF });
    expect(decodeListBody(page.body, undefined).metadata).toMatchObject({ continue: expect.any(String), remainingItemCount: 1 });
  });

  it('answers a custom resource asked protobuf only 406 with a protobuf Status (10g), asked protobuf or JSON in JSON (10h)', async () => {
    api = await server();
    const only = await get('/apis/pb.example.com/v1/namespaces/ns/apples', { Accept: PROTOBUF });
    expect([only.status, only.type]).toEqual([406, PROTOBUF]);
    expect(decodeObjectBody(only.body)).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
    const either = await get('/apis/pb.example.com/v1/namespaces/ns/apples', { Accept: `${PROTOBUF}, application/json` });
    expect([either.status, either.type]).toEqual([200, 'application/json']);
  });

  it.each([false, true])(
    'gets one object in protobuf that decodes to its JSON (pods of 10b, a configmap, a deployment, a status subresource; gzip %s)',
    async (gzip) => {
      api = await server(gzip);
      for (const pod of json('10b-list-pods-json-same-rv').items)
        api.create('pods', { ...pod, metadata: { ...pod.metadata, namespace: 'ns' } });
      // As a real server stores it (encoding/json's shape: always-written fields present), so its JSON and protobuf agree.
      api.create('deployments', {
        metadata: { name: 'd', namespace: 'ns' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'd' } },
          template: {
            metadata: { creationTimestamp: null, labels: { app: 'd' } },
            spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '500m' } } }] },
          },
          strategy: { type: 'Recreate' },
        },
        status: { replicas: 2 },
      });
      const paths = [
        '/api/v1/namespaces/ns/pods/web-1',
        '/api/v1/namespaces/ns/pods/web-2',
        '/api/v1/namespaces/ns/pods/web-1/status',
        '/api/v1/namespaces/ns/configmaps/cm-1',
        '/apis/apps/v1/namespaces/ns/deployments/d',
      ];
      for (const path of paths) {
        const asJson = await get(path, { Accept: 'application/json', 'Accept-Encoding': 'gzip' });
        expect([asJson.status, asJson.type], path).toEqual([200, 'application/json']);
        for (const accept of [PROTOBUF, `${PROTOBUF}, application/json`]) {
          const pb = await get(path, { Accept: accept, 'Accept-Encoding': 'gzip' });
          expect([pb.status, pb.type], `${path} ${accept}`).toEqual([200, PROTOBUF]);
          expect(JSON.parse(JSON.stringify(decodeObjectBody(pb.body))), path).toStrictEqual(JSON.parse(asJson.body.toString()));
        }
      }
      expect(api.requests.filter((r) => r.name !== undefined).map((r) => r.contentType)).toEqual(
        paths.flatMap(() => ['application/json', PROTOBUF, PROTOBUF]),
      );
    },
  );

  it('gets one custom resource asked protobuf only: 406 with a protobuf Status (as 10g), asked protobuf or JSON: JSON', async () => {
    api = await server();
    const path = '/apis/pb.example.com/v1/namespaces/ns/apples/a';
    const only = await get(path, { Accept: PROTOBUF });
    expect([only.status, only.type]).toEqual([406, PROTOBUF]);
    expect(decodeObjectBody(only.body)).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
    // Negotiated before the object is read: a missing one is 406 too.
    expect((await get(`${path}-missing`, { Accept: PROTOBUF })).status).toBe(406);
    const either = await get(path, { Accept: `${PROTOBUF}, application/json` });
    expect([either.status, either.type]).toEqual([200, 'application/json']);
    expect(JSON.parse(either.body.toString())).toMatchObject({ kind: 'Apple', metadata: { name: 'a' } });
  });

  it('answers a missing object with a protobuf 404 Status (10f)', async () => {
    api = await server();
    const missing = await get('/api/v1/namespaces/ns/configmaps/nope', { Accept: PROTOBUF });
    expect([missing.status, missing.type]).toEqual([404, PROTOBUF]);
    expect(decodeObjectBody(missing.body)).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('watches in protobuf frames (ADDED; ERROR 410 from a compacted resourceVersion)', async () => {
    api = await server();
    const watch = await get('/api/v1/namespaces/ns/configmaps?watch=1&timeoutSeconds=1', { Accept: PROTOBUF });
    expect(watch.type).toBe(`${PROTOBUF};stream=watch`);
    const events = frames(watch.body).map((f) => decodeWatchFrame(f, undefined));
    expect(events.map((e) => `${e.type}:${(e.object.metadata as { name: string }).name}`)).toEqual([
      'ADDED:cm-1',
      'ADDED:cm-2',
      'ADDED:cm-3',
    ]);
    api.compact();
    const expired = await get('/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=1', { Accept: PROTOBUF });
    expect(frames(expired.body).map((f) => decodeWatchFrame(f, undefined))).toMatchObject([
      { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } },
    ]);
  });

  it.each([
    ['/apis/apps/v1/namespaces/ns/deployments', 'DeploymentList'],
    ['/apis/apps/v1/namespaces/ns/replicasets', 'ReplicaSetList'],
    ['/apis/coordination.k8s.io/v1/namespaces/ns/leases', 'LeaseList'],
  ])('lists and watches %s in protobuf that decodes to its JSON', async (path, listKind) => {
    api = await server();
    // Objects as a real server stores them (encoding/json's shape: always-written fields present), so its JSON and protobuf agree.
    const template = {
      metadata: { creationTimestamp: null, labels: { app: 'd' } },
      spec: {
        containers: [
          { name: 'c', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: { limits: { cpu: '500m' } } },
        ],
      },
    };
    api.create('deployments', {
      metadata: { name: 'd', namespace: 'ns', labels: { app: 'd' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'd' } },
        template,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
        revisionHistoryLimit: 10,
      },
      status: {
        observedGeneration: 1,
        replicas: 2,
        conditions: [
          { type: 'Available', status: 'True', lastUpdateTime: '2026-11-27T06:00:00Z', lastTransitionTime: '2026-11-27T06:00:00Z' },
        ],
      },
    });
    api.create('replicasets', {
      metadata: {
        name: 'r',
        namespace: 'ns',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u-1', controller: true }],
      },
      spec: { replicas: 1, selector: { matchLabels: { app: 'd' } }, template },
      status: { replicas: 0 },
    });
    api.create('leases', {
      metadata: { name: 'l', namespace: 'ns' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: '2026-11-27T06:00:00.123456Z', leaseTransitions: 3 },
    });
    const asJson = JSON.parse((await get(path, { Accept: 'application/json' })).body.toString());
    const pb = await get(path, { Accept: `${PROTOBUF}, application/json` });
    expect([pb.status, pb.type]).toEqual([200, PROTOBUF]);
    const list = JSON.parse(JSON.stringify(decodeListBody(pb.body, undefined)));
    expect(list).toStrictEqual(asJson);
    expect(list).toMatchObject({ kind: listKind, items: [{ metadata: { namespace: 'ns' } }] });
    const watch = await get(`${path}?watch=1&timeoutSeconds=1`, { Accept: PROTOBUF });
    expect(watch.type).toBe(`${PROTOBUF};stream=watch`);
    const events = frames(watch.body).map((f) => decodeWatchFrame(f, undefined));
    const [apiVersion, kind] = [asJson.apiVersion, listKind.replace(/List$/, '')];
    expect(JSON.parse(JSON.stringify(events.map((e) => e.object)))).toStrictEqual(
      asJson.items.map((item: object) => ({ kind, apiVersion, ...item })),
    );
  });
});
