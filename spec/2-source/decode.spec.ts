import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InformerError, KubeObject, kubeObject, stripManagedFields } from '../../src/index.ts';
import { decoder } from '../../src/pipeline.ts';
import { lazyParseWatchLine } from '../../src/1-transport/lazyJson.ts';
import { checkMessage } from '../../src/1-transport/protobuf/check.ts';
import { decodeWatchFrame } from '../../src/1-transport/protobuf/decode.ts';
import { decodeLazyInto, unreadProtobufBytes } from '../../src/1-transport/protobuf/lazy.ts';
import { message } from '../../src/1-transport/protobuf/schema.ts';
import { begin, release } from '../../src/1-transport/protobuf/wire.ts';
import { encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod } from '../../bench/workload/pods.ts';

const Apple = kubeObject({
  spec: z.object({ color: z.enum(['red', 'green']), quantity: z.number().int().min(1) }),
});
type Apple = z.infer<typeof Apple>;

const raw = (spec: unknown, metadata: Record<string, unknown> = { name: 'gala', namespace: 'orchard', resourceVersion: '42' }) => ({
  apiVersion: 'stable.example.com/v1',
  kind: 'Apple',
  metadata,
  spec,
});

describe('decoder', () => {
  it('returns the validated object; fields the schema does not describe pass through', () => {
    const decode = decoder(Apple);
    const input = { ...raw({ color: 'red', quantity: 3 }), status: { ripe: true } };
    input.metadata.managedFields = [{ manager: 'kubectl' }];
    const out = decode(input, 'watch');
    expect(out).not.toBeInstanceOf(InformerError);
    expect(out).toEqual(input);
  });

  it('a rejected object becomes ValidationFailed with key, resourceVersion, phase and zod issue paths', () => {
    const decode = decoder(Apple);
    const out = decode(raw({ color: 'blue', quantity: 0 }), 'list');
    expect(out).toBeInstanceOf(InformerError);
    const error = out as InformerError;
    expect(error).toMatchObject({ reason: 'ValidationFailed', phase: 'list', key: 'orchard/gala', resourceVersion: '42' });
    expect(error.issues?.map((i) => i.path)).toEqual([
      ['spec', 'color'],
      ['spec', 'quantity'],
    ]);
    expect(error.message).toContain('orchard/gala');
    expect(error.message).toContain('spec.color');
    expect(error.message).toContain('spec.quantity');
  });

  it('validates metadata: a missing name is reported at metadata.name, without a key', () => {
    const out = decoder(KubeObject)({ metadata: { namespace: 'ns' } }, 'watch') as InformerError;
    expect(out).toBeInstanceOf(InformerError);
    expect(out.key).toBeUndefined();
    expect(out.issues?.map((i) => i.path)).toEqual([['metadata', 'name']]);
    const notObject = decoder(KubeObject)('nope', 'watch') as InformerError;
    expect(notObject.issues?.[0]?.path).toEqual([]);
    expect(notObject.message).toContain('(root)');
  });

  it('a cluster-scoped object is keyed by name alone', () => {
    const out = decoder(Apple)(raw({}, { name: 'node-1' }), 'watch') as InformerError;
    expect(out.key).toBe('node-1');
  });

  it('applies the transform after validation', () => {
    const seen: Apple[] = [];
    const decode = decoder(Apple, (apple) => {
      seen.push(apple);
      return { ...apple, spec: { ...apple.spec, quantity: apple.spec.quantity * 10 } };
    });
    expect(decode(raw({ color: 'green', quantity: 2 }), 'watch')).toMatchObject({ spec: { color: 'green', quantity: 20 } });
    // not run on what the schema rejects
    expect(decode(raw({ color: 'green', quantity: -1 }), 'watch')).toBeInstanceOf(InformerError);
    expect(seen).toHaveLength(1);
  });

  it('stripManagedFields as a transform drops metadata.managedFields and leaves the input alone', () => {
    const input = raw({ color: 'red', quantity: 1 }, { name: 'a', managedFields: [{ manager: 'kubectl' }], labels: { x: 'y' } });
    const out = decoder(Apple, stripManagedFields)(input, 'watch') as Apple;
    expect(out.metadata).toEqual({ name: 'a', labels: { x: 'y' } });
    expect(input.metadata).toHaveProperty('managedFields');
  });

  it('a transform that throws becomes TransformError carrying key, resourceVersion and the cause', () => {
    const boom = new Error('boom');
    const out = decoder(Apple, () => {
      throw boom;
    })(raw({ color: 'red', quantity: 1 }), 'watch') as InformerError;
    expect(out).toBeInstanceOf(InformerError);
    expect(out).toMatchObject({ reason: 'TransformError', phase: 'watch', key: 'orchard/gala', resourceVersion: '42' });
    expect(out.cause).toBe(boom);
  });

  it('a transform that throws a non-Error value is reported too', () => {
    const out = decoder(Apple, () => {
      throw 'nope';
    })(raw({ color: 'red', quantity: 1 }), 'watch') as InformerError;
    expect(out).toMatchObject({ reason: 'TransformError', key: 'orchard/gala' });
  });

  it('a transform that loses the metadata is a TransformError (the cache files objects by key); one that renames is obeyed, as client-go', () => {
    const lost = decoder(Apple, (apple) => ({ ...apple, metadata: undefined }) as unknown as Apple)(
      raw({ color: 'red', quantity: 1 }),
      'watch',
    );
    expect(lost).toMatchObject({ reason: 'TransformError', key: 'orchard/gala', message: expect.stringMatching(/without metadata.name/) });
    const renamed = decoder(Apple, (apple) => ({ ...apple, metadata: { ...apple.metadata, name: 'fuji' } }))(
      raw({ color: 'red', quantity: 1 }),
      'watch',
    );
    expect(renamed).toMatchObject({ metadata: { namespace: 'orchard', name: 'fuji' } });
    const kept = decoder(Apple, stripManagedFields)(raw({ color: 'red', quantity: 1 }), 'watch');
    expect(kept).not.toBeInstanceOf(InformerError);
  });

  it('keeps the renames a transform made, by raw key, until a DELETED or two whole lists without them (audit42)', () => {
    const decode = decoder(Apple, (apple) =>
      apple.spec.color === 'green' ? apple : { ...apple, metadata: { ...apple.metadata, name: `t-${apple.metadata.name}` } },
    );
    const renames = decode.renames!;
    const at = (name: string, color: string) => raw({ color, quantity: 1 }, { name, namespace: 'orchard', resourceVersion: '1' });
    decode(at('gala', 'red'), 'list');
    decode(at('fuji', 'red'), 'list');
    expect([renames.cachedKey('orchard/gala'), renames.cachedKey('orchard/fuji'), renames.cachedKey('orchard/pink')]).toEqual([
      'orchard/t-gala',
      'orchard/t-fuji',
      'orchard/pink',
    ]);
    expect(renames.size).toBe(2);
    decode(at('fuji', 'green'), 'watch'); // a version not renamed: its own key again
    expect([renames.cachedKey('orchard/fuji'), renames.size]).toEqual(['orchard/fuji', 1]);
    renames.forget('orchard/gala');
    expect(renames.size).toBe(0);
    decode(at('gala', 'red'), 'list');
    renames.listed();
    expect(renames.cachedKey('orchard/gala')).toBe('orchard/t-gala'); // looked up: kept a list longer
    renames.listed();
    expect(renames.size).toBe(1);
    renames.listed();
    expect([renames.size, renames.cachedKey('orchard/gala')]).toEqual([0, 'orchard/gala']);
    expect(decoder(Apple).renames).toBeUndefined();
  });

  it('a refinement that throws becomes ValidationFailed with key and issues (it never escapes the decoder)', () => {
    const Picky = kubeObject({ spec: z.looseObject({}) }).refine((apple) => {
      if ((apple.spec as { boom?: boolean }).boom) throw new TypeError('refinement exploded');
      return true;
    });
    const decode = decoder(Picky as unknown as z.ZodType<KubeObject>);
    const out = decode(raw({ boom: true }), 'list') as InformerError;
    expect(out).toBeInstanceOf(InformerError);
    expect(out).toMatchObject({ reason: 'ValidationFailed', phase: 'list', key: 'orchard/gala', resourceVersion: '42' });
    expect(out.issues?.length).toBeGreaterThan(0);
    expect(out.message).toContain('refinement exploded');
    expect(decode(raw({}), 'list')).not.toBeInstanceOf(InformerError);
  });

  it('with typeMeta, an object of another kind or apiVersion is ValidationFailed (client-go skips it); list items without them are completed', () => {
    const decode = decoder(KubeObject, undefined, { apiVersion: 'stable.example.com/v1', kind: 'Apple' });
    const pear = decode({ ...raw({}), kind: 'Pear' }, 'watch') as InformerError;
    expect(pear).toMatchObject({ reason: 'ValidationFailed', key: 'orchard/gala', resourceVersion: '42' });
    expect(pear.issues?.map((i) => i.path)).toEqual([['kind']]);
    const v2 = decode({ ...raw({}), apiVersion: 'stable.example.com/v2' }, 'watch') as InformerError;
    expect(v2.issues?.map((i) => i.path)).toEqual([['apiVersion']]);
    expect(decode({ metadata: { name: 'a' } }, 'list')).toEqual({
      apiVersion: 'stable.example.com/v1',
      kind: 'Apple',
      metadata: { name: 'a' },
    });
  });

  it('a "__proto__" key is ValidationFailed with key and issues, with any schema', () => {
    const withProto = JSON.parse(
      '{"apiVersion":"stable.example.com/v1","kind":"Apple","metadata":{"name":"gala","namespace":"orchard","resourceVersion":"7"},"__proto__":{"x":1},"spec":{"color":"red","quantity":1}}',
    );
    for (const schema of [KubeObject, Apple] as z.ZodType<KubeObject>[]) {
      const out = decoder(schema)(structuredClone(withProto), 'watch') as InformerError;
      expect(out).toBeInstanceOf(InformerError);
      expect(out).toMatchObject({ reason: 'ValidationFailed', key: 'orchard/gala', resourceVersion: '7' });
      expect(out.issues?.map((i) => i.path)).toEqual([['__proto__']]);
    }
  });
});

/**
 * Issue #36: the protobuf transport's lazy objects keep metadata's annotations and ownerReferences as bytes (labels are
 * decoded: lazy.ts's isLazy says why), and its decode vouches for their shape (the schema's types, the walk; a `__proto__` map key seen in the bytes), so the
 * decoder's check does not read them. Everything else is checked as before: a JSON object (plain or lazy), a protobuf
 * object with a `__proto__` key or whose member was changed after its decode, each refused exactly as today.
 */
describe('decoder: what the protobuf decode vouches for, and nothing else', () => {
  const typeMeta = { apiVersion: 'v1', kind: 'Pod' } as const;
  const decode = decoder(KubeObject, undefined, typeMeta);
  const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  /** `object` as the protobuf transport hands it on: a watch frame encoded, then decoded (walked, lazily). */
  const viaProtobuf = (object: Record<string, unknown>) =>
    decodeWatchFrame(encodeWatchFrame('MODIFIED', object).subarray(4), undefined).object as Record<string, Record<string, unknown>>;
  const viaLazyJson = (object: unknown) =>
    lazyParseWatchLine(JSON.stringify({ type: 'MODIFIED', object })).object as Record<string, Record<string, unknown>>;
  const pod = () => json(makePod({ index: 3, resourceVersion: 4, revision: 1 }));
  const MEMBERS = ['labels', 'annotations', 'ownerReferences'] as const;
  /** The refusal of an object: its reason and issues' paths (what the decoder says of it), or 'accepted'. */
  const verdict = (out: unknown) =>
    out instanceof InformerError ? { reason: out.reason, paths: out.issues?.map((i) => i.path.join('.')) } : 'accepted';

  it('a protobuf object is accepted with its annotations and ownerReferences unread, and reads the same after', () => {
    const object = viaProtobuf(pod());
    expect(decode(object, 'watch')).toBe(object);
    for (const member of ['annotations', 'ownerReferences'])
      expect(unreadProtobufBytes(object.metadata!, member), member).toBeGreaterThan(0);
    expect(object).toStrictEqual(pod());
  });

  it('a __proto__ key in a protobuf object’s labels or annotations is refused as in the JSON one, at the same path', () => {
    for (const map of ['labels', 'annotations'] as const) {
      const bad = pod();
      bad.metadata = { ...(bad.metadata as object), [map]: JSON.parse('{"a":"1","__proto__":"x","z":"2"}') };
      const expected = verdict(decode(json(bad), 'watch'));
      expect(expected, map).toEqual({ reason: 'ValidationFailed', paths: [`metadata.${map}.__proto__`] });
      expect(verdict(decode(viaProtobuf(bad), 'watch')), map).toEqual(expected);
      expect(verdict(decode(viaLazyJson(bad), 'watch')), map).toEqual(expected);
    }
  });

  /** A Pod's bytes whose metadata has `entries`, each an annotations map entry (field 12) given as its raw fields. */
  const podBytes = (...entries: number[][]) => {
    const field = (tag: number, body: number[]) => [tag, body.length, ...body];
    const text = (value: string) => [...Buffer.from(value)];
    const meta = [...field(0x0a, text('p')), ...entries.flatMap((entry) => field(0x62, entry))];
    return Buffer.from(field(0x0a, meta));
  };
  const key = (k: string) => [0x0a, k.length, ...Buffer.from(k)];
  const value = (v: string) => [0x12, v.length, ...Buffer.from(v)];
  const lazily = (bytes: Buffer) => {
    begin(bytes, 0);
    try {
      checkMessage(bytes.length, message('Pod'));
      begin(bytes, 0);
      const target: Record<string, unknown> = { apiVersion: 'v1', kind: 'Pod' };
      decodeLazyInto(target, bytes.length, message('Pod'));
      return target as Record<string, Record<string, unknown>>;
    } finally {
      release(undefined);
    }
  };

  it('map entries not as a server writes them are read and checked: a __proto__ key however it comes is refused', () => {
    const refused = { reason: 'ValidationFailed', paths: ['metadata.annotations.__proto__'] };
    for (const [what, entries, expected] of [
      ['key then value', [[...key('a'), ...value('1')]], 'accepted'],
      ['a key alone (an empty value)', [[...key('a')]], 'accepted'],
      ['__proto__, key then value', [[...key('__proto__'), ...value('1')]], refused],
      ['__proto__ alone', [[...key('__proto__')]], refused],
      ['__proto__, value then key', [[...value('1'), ...key('__proto__')]], refused],
      ['a key, then __proto__ as a second key', [[...key('a'), ...value('1'), ...key('__proto__')]], refused],
      [
        '__proto__ in a second entry',
        [
          [...key('a'), ...value('1')],
          [...key('__proto__'), ...value('2')],
        ],
        refused,
      ],
      ['an ordinary key, value first', [[...value('1'), ...key('a')]], 'accepted'],
      ['an entry with neither', [[]], 'accepted'],
    ] as const) {
      const object = lazily(podBytes(...(entries as unknown as number[][])));
      expect(verdict(decode(object, 'watch')), what).toEqual(expected);
      // Its JSON twin (the same object written and parsed: an own __proto__ key stays one) gets the same verdict.
      expect(verdict(decode(json(object), 'watch')), `${what}, as JSON`).toEqual(expected);
    }
  });

  it('a member written, redefined or deleted after the decode is checked as any object’s: a wrong one is refused', () => {
    const wrong = { labels: { a: 1 }, annotations: { b: null }, ownerReferences: [{ name: 'x' }] } as const;
    const changes: [string, (metadata: Record<string, unknown>, member: (typeof MEMBERS)[number]) => void][] = [
      ['assigned', (m, member) => (m[member] = wrong[member])],
      ['defined as data', (m, member) => Object.defineProperty(m, member, { value: wrong[member], enumerable: true })],
      ['defined as a getter', (m, member) => Object.defineProperty(m, member, { get: () => wrong[member], enumerable: true })],
      ['deleted, then assigned', (m, member) => (delete m[member], (m[member] = wrong[member]))],
      ['read, then changed in place', (m, member) => Object.assign(m[member] as object, member === 'ownerReferences' ? [{}] : { c: 2 })],
      [
        'frozen, read, then changed in place',
        (m, member) => (Object.freeze(m), Object.assign(m[member] as object, member === 'ownerReferences' ? [{}] : { c: 2 })),
      ],
    ];
    for (const member of MEMBERS)
      for (const [how, change] of changes) {
        const object = viaProtobuf(pod());
        change(object.metadata!, member);
        const out = decode(object, 'watch');
        expect(out, `${member} ${how}`).toBeInstanceOf(InformerError);
        expect((out as InformerError).issues?.[0]?.path.slice(0, 2), `${member} ${how}`).toEqual(['metadata', member]);
      }
    // The same changes with a right value: accepted.
    const object = viaProtobuf(pod());
    object.metadata!.labels = { fine: 'yes' };
    expect(decode(object, 'watch')).toBe(object);
  });

  it('never vouches for a JSON object, plain or lazy, nor for a copy of a protobuf one: a wrong member is refused', () => {
    const wrong = { labels: { a: 1 }, annotations: { b: ['x'] }, ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'n' }] };
    for (const member of MEMBERS) {
      const bad = pod();
      bad.metadata = { ...(bad.metadata as object), [member]: wrong[member] };
      const protobuf = viaProtobuf(pod());
      for (const [what, object] of [
        ['JSON', json(bad)],
        ['lazy JSON', viaLazyJson(bad)],
        ['a protobuf object’s metadata spread', { ...protobuf, metadata: { ...protobuf.metadata, [member]: wrong[member] } }],
      ] as const) {
        const out = decode(object, 'list');
        expect(out, `${member}: ${what}`).toBeInstanceOf(InformerError);
        expect((out as InformerError).issues?.[0]?.path.slice(0, 2), `${member}: ${what}`).toEqual(['metadata', member]);
      }
    }
  });
});
