import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isKubeObject, VOUCHED_ANNOTATIONS, VOUCHED_LABELS, VOUCHED_OWNER_REFERENCES } from '../../src/0-model/isKubeObject.ts';
import { KubeObject, Pod } from '../../src/index.ts';
import { decoder } from '../../src/pipeline.ts';

/** Values near the schema's edges: right and wrong types for every field it checks. */
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
const junk = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
);
const field = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 5, arbitrary: maybe(good) }, { weight: 1, arbitrary: junk });
/** Map keys, now and then an own `__proto__` (JSON.parse makes it plain data). */
const mapKey = fc.oneof({ weight: 9, arbitrary: fc.string() }, { weight: 1, arbitrary: fc.constant('__proto__') });
const ownerRef = fc.record(
  {
    apiVersion: field(fc.string()),
    kind: field(fc.string()),
    name: field(fc.string()),
    uid: field(fc.string()),
    controller: field(fc.boolean()),
    blockOwnerDeletion: field(fc.boolean()),
  },
  { requiredKeys: [] },
);
const metadata = fc.record(
  {
    name: field(fc.string({ maxLength: 3 })),
    namespace: field(fc.string()),
    uid: field(fc.string()),
    resourceVersion: field(fc.string()),
    generation: field(fc.integer()),
    creationTimestamp: field(fc.option(fc.string(), { nil: null })),
    deletionTimestamp: field(fc.option(fc.string(), { nil: null })),
    labels: field(fc.dictionary(mapKey, fc.oneof({ weight: 5, arbitrary: fc.string() }, { weight: 1, arbitrary: junk }), { maxKeys: 3 })),
    annotations: field(fc.dictionary(mapKey, fc.string(), { maxKeys: 2 })),
    ownerReferences: field(fc.array(ownerRef, { maxLength: 2 })),
    extra: fc.anything({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
);
const objects = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        apiVersion: field(fc.string()),
        kind: field(fc.string()),
        metadata: fc.oneof({ weight: 8, arbitrary: metadata }, { weight: 1, arbitrary: junk }),
        spec: fc.anything({ maxDepth: 2 }),
      },
      { requiredKeys: ['metadata'] },
    ),
  },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
);

const own = (v: unknown) => typeof v === 'object' && v !== null && Object.prototype.hasOwnProperty.call(v, '__proto__');
/** An own `__proto__` key at the top, in metadata, or in its labels or annotations (JSON.parse makes them plain data). */
function ownProtoKey(raw: unknown): boolean {
  if (own(raw)) return true;
  const m = (raw as { metadata?: { labels?: unknown; annotations?: unknown } } | null)?.metadata;
  return own(m) || own(m?.labels) || own(m?.annotations);
}

describe('the copy-free KubeObject check', () => {
  it('accepts exactly what the zod schema accepts', () => {
    fc.assert(
      fc.property(objects, (value) => {
        // JSON round trip: what the transport hands over (no undefined values, no -0, no NaN).
        const json = JSON.stringify(value);
        if (json === undefined) return;
        const raw: unknown = JSON.parse(json);
        // …but for an own `__proto__` key, which zod drops silently and the decoder reports (checked below).
        expect(isKubeObject(raw)).toBe(KubeObject.safeParse(raw).success && !ownProtoKey(raw));
      }),
      { numRuns: 3000 },
    );
  });

  it('the decoder returns the parsed object itself, and reports a __proto__ key instead of dropping it', () => {
    const decode = decoder(Pod.schema);
    const raw = JSON.parse('{"metadata":{"name":"a","namespace":"n","resourceVersion":"1"},"spec":{}}');
    expect(decode(raw, 'watch')).toBe(raw);
    const poisoned = JSON.parse('{"metadata":{"name":"a","__proto__":{"polluted":true}}}');
    const result = decode(poisoned, 'watch');
    expect(result).toMatchObject({ reason: 'ValidationFailed', key: 'a' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // In labels or annotations too (fast-check found `labels: {"__proto__": false}`, which zod accepted by dropping it).
    for (const [json, path] of [
      ['{"metadata":{"name":" ","labels":{"__proto__":false}}}', 'metadata.labels.__proto__'],
      ['{"metadata":{"name":"a","annotations":{"__proto__":"x"}}}', 'metadata.annotations.__proto__'],
    ] as const) {
      const raw: unknown = JSON.parse(json);
      expect(isKubeObject(raw)).toBe(false);
      const rejected = decode(raw, 'list');
      expect(rejected).toMatchObject({ reason: 'ValidationFailed' });
      expect((rejected as unknown as { issues: { path: PropertyKey[] }[] }).issues.map((i) => i.path.join('.'))).toEqual([path]);
    }
    const invalid = decode(JSON.parse('{"metadata":{"name":"","labels":{"a":1}}}'), 'list');
    expect(invalid).toMatchObject({ reason: 'ValidationFailed' });
    expect((invalid as unknown as { issues: { path: PropertyKey[] }[] }).issues.map((i) => i.path.join('.'))).toEqual([
      'metadata.name',
      'metadata.labels.a',
    ]);
  });

  it('accepts null for an empty map or list (labels, annotations, ownerReferences), as Kubernetes decodes it, and keeps it as sent', () => {
    const raw = JSON.parse('{"metadata":{"name":"a","namespace":"n","labels":null,"annotations":null,"ownerReferences":null},"spec":{}}');
    expect(KubeObject.safeParse(raw).success).toBe(true);
    expect(isKubeObject(raw)).toBe(true);
    expect(decoder(Pod.schema)(raw, 'list')).toBe(raw);
    // Still rejected: a map of the wrong shape.
    expect(isKubeObject(JSON.parse('{"metadata":{"name":"a","labels":[]}}'))).toBe(false);
    expect(isKubeObject(JSON.parse('{"metadata":{"name":"a","labels":{"a":null}}}'))).toBe(false);
  });

  it('with a vouch: the members it vouches for are not read, every other check is made; with none, the same verdict', () => {
    const BITS = { labels: VOUCHED_LABELS, annotations: VOUCHED_ANNOTATIONS, ownerReferences: VOUCHED_OWNER_REFERENCES } as const;
    const wrong = { labels: { a: 1 }, annotations: [], ownerReferences: [{}] } as const;
    for (const [member, bit] of Object.entries(BITS) as [keyof typeof BITS, number][]) {
      const raw = { metadata: { name: 'a', ...wrong } as Record<string, unknown> };
      let read = 0;
      Object.defineProperty(raw.metadata, member, { get: () => (read++, wrong[member]), enumerable: true });
      const seen: unknown[] = [];
      const vouch = (metadata: Record<string, unknown>) => (seen.push(metadata), bit);
      // The other two members are wrong and not vouched for: still refused, each of them checked.
      expect(isKubeObject(raw, vouch), member).toBe(false);
      for (const other of Object.keys(BITS).filter((m) => m !== member)) delete raw.metadata[other];
      expect(isKubeObject(raw, vouch), member).toBe(true);
      expect(read, member).toBe(0);
      expect(seen.every((m) => m === raw.metadata)).toBe(true);
      expect(isKubeObject(raw), member).toBe(false);
      expect(
        isKubeObject(raw, () => 0),
        member,
      ).toBe(false);
    }
    // The rest of metadata is checked whatever is vouched for.
    expect(isKubeObject({ metadata: { name: '', labels: {} } }, () => 7)).toBe(false);
    expect(isKubeObject({ metadata: { name: 'a', resourceVersion: 1 } }, () => 7)).toBe(false);
    expect(isKubeObject(JSON.parse('{"metadata":{"name":"a","__proto__":{}}}'), () => 7)).toBe(false);
    fc.assert(
      fc.property(objects, (value) => {
        const raw: unknown = JSON.parse(JSON.stringify(value) ?? 'null');
        expect(isKubeObject(raw, () => 0)).toBe(isKubeObject(raw));
      }),
      { numRuns: 500 },
    );
  });
});
