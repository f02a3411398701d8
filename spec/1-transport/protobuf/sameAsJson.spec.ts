import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseWatchFrame, parseWatchLineLazily } from '../../../src/1-transport/http/decode.ts';
import { isSkipped } from '../../../src/1-transport/lazyJson.ts';
import { decodeListBody } from '../../../src/1-transport/protobuf/decode.ts';
import { KINDS as SCHEMA_KINDS } from '../../../src/1-transport/protobuf/schema.generated.ts';
import { encodeEnvelope, encodeWatchFrame } from '../../../packages/emulator/src/protobuf/encode.ts';
import { object, type Json } from './generated.ts';

/**
 * Property (issue #36): objects read through protobuf deep-equal what the JSON path gives for the same object,
 * over generated objects of every built-in kind the library has a resource for (Pod, ConfigMap, Secret, Service,
 * Namespace, Node and Event of core/v1; Deployment and ReplicaSet of apps/v1; Lease of coordination.k8s.io/v1) and
 * apps/v1's other kinds (StatefulSet, DaemonSet, ControllerRevision), and, with fewer runs, every other kind the schema
 * (k8s.io/api v0.20.2) knows. An object is generated from the schema as Go's
 * encoding/json writes a value (fields that are always written present, `omitempty` ones absent or non-zero,
 * pointers absent or any value, nil lists and maps `null`), then sent both ways: as JSON text, and encoded as
 * kube-apiserver encodes it (the emulator's encoder, checked byte for byte against a real server's recordings).
 */
const RESOURCE_KINDS = [
  'Pod',
  'ConfigMap',
  'Secret',
  'Service',
  'Namespace',
  'Node',
  'Event',
  'Deployment',
  'ReplicaSet',
  'Lease',
] as const;
const KINDS = [...RESOURCE_KINDS, 'StatefulSet', 'DaemonSet', 'ControllerRevision'] as const;
const OTHER_KINDS = Object.keys(SCHEMA_KINDS).filter((kind) => !(KINDS as readonly string[]).includes(kind));
/**
 * Deep-equal, and the same text: `JSON.stringify` (a spec's hash, `watch -o json`, a webhook's payload) gives the
 * server's JSON byte for byte, keys in its order (Go struct order, `kind` before `apiVersion`), whichever the encoding.
 */
const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b);

/** A watch event of a generated `kind`, as protobuf, gives the JSON path's object (eager and lazy JSON alike). */
function eventSame(kind: string, seed: number): boolean {
  const value = object(kind, seed);
  const line = JSON.stringify({ type: 'MODIFIED', object: value });
  const fromJson = JSON.parse(line) as { object: unknown };
  const fromProtobuf = parseWatchFrame(encodeWatchFrame('MODIFIED', value).subarray(4));
  const lazyJson = parseWatchLineLazily(Buffer.from(line));
  return same(fromProtobuf, fromJson) && same(lazyJson, fromJson);
}

/** A list of `n` generated `kind`s, as protobuf, gives the JSON list; with a keep predicate, dropped items are skeletons. */
function listSame(kind: string, seed: number, n: number): boolean {
  const items = Array.from({ length: n }, (_, i) => {
    const { apiVersion: _a, kind: _k, ...item } = object(kind, seed + i);
    return item;
  });
  const list = { kind: `${kind}List`, apiVersion: SCHEMA_KINDS[kind]!, metadata: { resourceVersion: String(seed), continue: 'c' }, items };
  const body = encodeEnvelope(list);
  const fromJson = JSON.parse(JSON.stringify(list)) as { items: Json[] };
  if (!same(decodeListBody(body, undefined), fromJson)) return false;
  const kept = decodeListBody(body, (s) => (s.metadata.name as string).endsWith('0')).items as Json[];
  return kept.every((item, i) => {
    const expected = fromJson.items[i]!;
    const meta = expected.metadata as Json;
    return isSkipped(item)
      ? isDeepStrictEqual(item, { metadata: { name: meta.name, namespace: meta.namespace, resourceVersion: meta.resourceVersion } })
      : same(item, expected);
  });
}

const seeds = fc.integer({ min: 1, max: 2 ** 30 });

describe('protobuf and JSON give the same objects', () => {
  it.each(KINDS)('property: a watch event of a %s, as protobuf, deep-equals the JSON path (eager and lazy)', (kind) => {
    fc.assert(
      fc.property(seeds, (seed) => eventSame(kind, seed)),
      { numRuns: 150 },
    );
  });

  it.each(KINDS)('property: a list of %s, as protobuf, deep-equals the JSON list; kept and dropped items alike', (kind) => {
    fc.assert(
      fc.property(seeds, fc.integer({ min: 0, max: 4 }), (seed, n) => listSame(kind, seed, n)),
      { numRuns: 60 },
    );
  });

  it('property: every other kind the schema knows, as protobuf, deep-equals the JSON path (events and lists)', () => {
    expect(OTHER_KINDS.length).toBeGreaterThan(5);
    fc.assert(
      fc.property(fc.constantFrom(...OTHER_KINDS), seeds, (kind, seed) => eventSame(kind, seed) && listSame(kind, seed, 2)),
      { numRuns: 200 },
    );
  });

  it.each([
    ['10a-list-pods-protobuf', '10b-list-pods-json-same-rv'],
    ['10a-list-configmaps-protobuf', '10b-list-configmaps-json-same-rv'],
  ])("a real kube-apiserver's %s stringifies to the text of its JSON twin %s (key order included)", (protobuf, twin) => {
    // Recorded at the same resourceVersion (spec/fixtures/protobuf): a container's terminationMessagePolicy between its
    // terminationMessagePath and imagePullPolicy, `kind` before `apiVersion`, as Go's struct order has them.
    const bin = (name: string) => readFileSync(join(import.meta.dirname, '../../fixtures/protobuf', `${name}.bin`));
    const text = JSON.stringify(JSON.parse(bin(twin).toString('utf8')));
    expect(JSON.stringify(decodeListBody(bin(protobuf), undefined))).toBe(text);
  });

  it('a `__proto__` map key (a ConfigMap data key, a label) is an own member, as JSON.parse makes it', () => {
    const line =
      '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"ns",' +
      '"resourceVersion":"1","creationTimestamp":null,"labels":{"__proto__":"l"}},"data":{"__proto__":"x","a":"1"}}}';
    const fromJson = JSON.parse(line) as { object: Json };
    const fromProtobuf = parseWatchFrame(encodeWatchFrame('ADDED', fromJson.object).subarray(4)) as { object: Json };
    const data = fromProtobuf.object.data as Json;
    expect(Object.getOwnPropertyDescriptor(data, '__proto__')?.value).toBe('x');
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.keys((fromProtobuf.object.metadata as Json).labels as Json)).toEqual(['__proto__']);
    expect(same(fromProtobuf, fromJson)).toBe(true);
  });

  it('generates objects with something in them (the property is not vacuous)', () => {
    const pod = object('Pod', 3);
    expect(JSON.stringify(pod).length).toBeGreaterThan(500);
    expect(pod.spec).toEqual(expect.objectContaining({ containers: expect.anything() }));
    const deployment = object('Deployment', 12345);
    expect(deployment.apiVersion).toBe('apps/v1');
    expect(deployment.spec).toEqual(expect.objectContaining({ template: expect.objectContaining({ spec: expect.anything() }) }));
    expect(object('Lease', 1).apiVersion).toBe('coordination.k8s.io/v1');
  });
});
