import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InformerError, KubeObject, kubeObject, stripManagedFields } from '../../src/index.ts';
import { decoder } from '../../src/pipeline.ts';

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
