import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InformerError, KubeObject, decoder, kubeObject, stripManagedFields } from '../../src/index.ts';

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

  it('a transform that throws becomes ValidationFailed carrying the cause', () => {
    const boom = new Error('boom');
    const out = decoder(Apple, () => {
      throw boom;
    })(raw({ color: 'red', quantity: 1 }), 'watch') as InformerError;
    expect(out).toBeInstanceOf(InformerError);
    expect(out).toMatchObject({ reason: 'ValidationFailed', phase: 'watch', key: 'orchard/gala' });
    expect(out.cause).toBe(boom);
  });
});
