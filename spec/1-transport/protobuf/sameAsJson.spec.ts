import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseWatchFrame, parseWatchLineLazily } from '../../../src/1-transport/http/decode.ts';
import { isSkipped } from '../../../src/1-transport/lazyJson.ts';
import { decodeListBody } from '../../../src/1-transport/protobuf/decode.ts';
import { K, message, type Field, type Message } from '../../../src/1-transport/protobuf/schema.ts';
import { KINDS as SCHEMA_KINDS } from '../../../src/1-transport/protobuf/schema.generated.ts';
import { seededRandom } from '../../../src/util/seededRandom.ts';
import { encodeEnvelope, encodeWatchFrame } from '../../../packages/emulator/src/protobuf/encode.ts';

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
const MAX_DEPTH = 6;
type Json = Record<string, unknown>;

/** A generated value of one Go type, as encoding/json writes it. */
class Generator {
  private readonly random: () => number;
  constructor(seed: number) {
    this.random = seededRandom(seed);
  }
  private int(n: number): number {
    return Math.floor(this.random() * n);
  }
  private chance(p: number): boolean {
    return this.random() < p;
  }
  private pick<T>(values: readonly T[]): T {
    return values[this.int(values.length)]!;
  }
  private string(): string {
    return this.pick([
      '',
      'a',
      'app',
      'kube-system',
      'registry.example.com/shop:1.2',
      'é ünïcode ✓',
      'line\nbreak "quoted"',
      'x'.repeat(40),
    ]);
  }
  private time(micro: boolean): string {
    // 0001-01-01 … 9999-12-31, whole seconds (Time) or microseconds (MicroTime).
    const seconds = -62_135_596_800 + this.int(315_537_897_599);
    const text = new Date(seconds * 1000).toISOString().slice(0, 19);
    return micro ? `${text}.${String(this.int(1_000_000)).padStart(6, '0')}Z` : `${text}Z`;
  }

  /** One value of field `f`'s kind (not a list or map), `zero` allowed. */
  private scalar(f: Field, depth: number, zero: boolean): unknown {
    switch (f.kind) {
      case K.string:
        return zero ? this.string() : this.string() || 'v';
      case K.bytes:
        return Buffer.from(Array.from({ length: this.int(6) + (zero ? 0 : 1) }, () => this.int(256))).toString('base64');
      case K.int32:
        return (this.chance(0.3) ? -1 : 1) * this.int(2 ** 31 - 1) || (zero ? 0 : 1);
      case K.int64:
        return (this.chance(0.3) ? -1 : 1) * this.int(2 ** 53 - 1) || (zero ? 0 : 1);
      case K.bool:
        return zero ? this.chance(0.5) : true;
      case K.time:
      case K.microTime:
        return this.time(f.kind === K.microTime);
      case K.quantity:
        return this.pick(['0', '1', '250m', '1.5', '512Mi', '1Gi', '100k']);
      case K.intOrString:
        return this.chance(0.5) ? this.int(65536) : this.pick(['http', '50%', '8080a']);
      case K.fieldsV1:
        return this.pick([{}, { 'f:metadata': { 'f:labels': { '.': {} } } }, { 'k:{"name":"c"}': { 'f:x': {} } }]);
      case K.raw:
        // A RawExtension (ControllerRevision.data): any JSON value, `null` when empty.
        return this.pick([null, {}, { spec: { template: { metadata: { labels: { app: 'a' } } } } }, [1, 'x'], 'text', 2.5]);
      case K.msg:
        return this.message(f.msg!, depth + 1);
      default:
        throw new Error(`no generator for kind ${f.kind} (${f.json})`);
    }
  }

  /** A value of field `f` with its presence, or undefined for absent. */
  private value(f: Field, depth: number): unknown {
    const deep = depth >= MAX_DEPTH;
    if (f.rep || f.map) {
      // A nil list or map: `null` when always written, absent when omitempty; a non-empty one otherwise.
      if (deep || this.chance(0.5)) return f.presence === 'always' ? null : undefined;
      const n = 1 + this.int(3);
      if (f.rep) return Array.from({ length: n }, () => this.scalar(f, depth, true));
      return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${this.string()}${i}`, this.scalar(f, depth, true)]));
    }
    if (f.presence === 'ptr') return deep || this.chance(0.5) ? undefined : this.scalar(f, depth, true);
    if (f.presence === 'omit') return deep || this.chance(0.5) ? undefined : this.scalar(f, depth, false);
    // Always written: a Time that is zero is `null` (creationTimestamp), a struct is written whole.
    if ((f.kind === K.time || f.kind === K.microTime) && (deep || this.chance(0.3))) return null;
    if (f.kind === K.msg) return this.message(f.msg!, depth + 1);
    if (deep) return f.kind === K.string ? '' : f.kind === K.bool ? false : f.kind === K.quantity ? '0' : 0;
    return this.scalar(f, depth, true);
  }

  message(msg: Message, depth: number): Json {
    const out: Json = {};
    for (const f of msg.fields) {
      if (f.inline) Object.assign(out, this.message(f.msg!, depth));
      else {
        const value = this.value(f, depth);
        if (value !== undefined) out[f.json] = value;
      }
    }
    return out;
  }
}

function object(kind: string, seed: number): Json {
  const generated = new Generator(seed).message(message(kind), 0);
  const metadata = { ...(generated.metadata as Json), name: `obj-${seed}`, namespace: `ns-${seed % 3}`, resourceVersion: String(seed) };
  return { apiVersion: SCHEMA_KINDS[kind]!, kind, ...generated, metadata };
}

const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, b) && isDeepStrictEqual(JSON.parse(JSON.stringify(a)), b);

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
  const list = { apiVersion: SCHEMA_KINDS[kind]!, kind: `${kind}List`, metadata: { resourceVersion: String(seed), continue: 'c' }, items };
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

  it('a `__proto__` map key (a ConfigMap data key, a label) is an own member, as JSON.parse makes it', () => {
    const line =
      '{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns",' +
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
    const pod = object('Pod', 12345);
    expect(JSON.stringify(pod).length).toBeGreaterThan(500);
    expect(pod.spec).toEqual(expect.objectContaining({ containers: expect.anything() }));
    const deployment = object('Deployment', 12345);
    expect(deployment.apiVersion).toBe('apps/v1');
    expect(deployment.spec).toEqual(expect.objectContaining({ template: expect.objectContaining({ spec: expect.anything() }) }));
    expect(object('Lease', 1).apiVersion).toBe('coordination.k8s.io/v1');
  });
});
