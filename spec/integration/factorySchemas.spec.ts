// One factory shared by unstructured and typed requests for one custom resource (the dynamic factory's `{ factory }`,
// docs/dynamic-and-metadata.md): each schema gets its own informer, so typed objects have run the typed schema
// (review audit44's F3: the typed request was handed the unstructured informer, cast); a typed schema is one object, and
// another object for the same informer is a Config error, not another watch (review audit46's F3).
import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, merge } from 'rxjs';
import { z } from 'zod';
import { InformerError, customResource, informerFactory, kubeObject, type Informer, type KubeObject } from '../../src/index.ts';
import { MY_APPLES, startApiServer } from 'rx-informer-emulator';

const description = { group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple', namespaced: true } as const;
const Apple = kubeObject({ spec: z.object({ color: z.string() }) });
const TypedApples = customResource({ ...description, schema: Apple });
const LooseApples = customResource(description);

/** The keys an informer caches once synced. */
async function cachedKeys(informer: Informer<KubeObject>): Promise<readonly string[]> {
  const running = informer.store$.subscribe();
  try {
    await firstValueFrom(informer.synced$.pipe(filter(Boolean)));
    return (await firstValueFrom(informer.store$)).keys().sort();
  } finally {
    running.unsubscribe();
  }
}

describe('informerFactory: one resource asked for with two schemas', () => {
  for (const order of ['unstructured first', 'typed first'] as const) {
    it(`${order}: two informers, each validating with its own schema`, async () => {
      const api = await startApiServer();
      api.registerCustomResource(MY_APPLES);
      try {
        const apple = { apiVersion: 'stable.example.com/v1', kind: 'MyApple' } as const;
        api.create('myapples.stable.example.com', { ...apple, metadata: { name: 'red', namespace: 'default' }, spec: { color: 'red' } });
        api.create('myapples.stable.example.com', { ...apple, metadata: { name: 'bare', namespace: 'default' } });
        const factory = informerFactory(api.kubeConfig);
        let loose: Informer<KubeObject>;
        let typed: Informer<KubeObject>;
        if (order === 'unstructured first') {
          loose = factory.informer(LooseApples);
          typed = factory.informer(TypedApples);
        } else {
          typed = factory.informer(TypedApples);
          loose = factory.informer(LooseApples);
        }
        expect(typed).not.toBe(loose);
        expect(factory.informers()).toHaveLength(2);
        // The typed cache holds what its schema accepts (bare has no spec.color: refused, ValidationFailed), the other all.
        expect(await cachedKeys(typed)).toEqual(['default/red']);
        expect(await cachedKeys(loose)).toEqual(['default/bare', 'default/red']);
        // Asking again with either schema is still the same informer.
        expect(factory.informer(TypedApples)).toBe(typed);
        expect(factory.informer(customResource({ ...description, schema: Apple }))).toBe(typed);
        expect(factory.informer(customResource(description))).toBe(loose);
      } finally {
        await api.close();
      }
    });
  }
});

describe('informerFactory: a typed resource whose schema is built per call', () => {
  // As a helper that builds its schema inside: each call a new schema object of the same shape.
  const apples = () => customResource({ ...description, schema: kubeObject({ spec: z.object({ color: z.string() }) }) });

  it('the same schema object is one informer; a new schema object is a Config error naming the resource, not a second watch', async () => {
    const api = await startApiServer();
    api.registerCustomResource(MY_APPLES);
    try {
      const factory = informerFactory(api.kubeConfig);
      const typed = factory.informer(TypedApples);
      expect(factory.informer(TypedApples)).toBe(typed);
      expect(factory.informer(customResource({ ...description, schema: Apple }))).toBe(typed);
      let refused: unknown;
      try {
        factory.informer(apples());
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(InformerError);
      expect((refused as InformerError).reason).toBe('Config');
      expect((refused as InformerError).message).toMatch(/myapples\.stable\.example\.com.*another schema object.*same object/);
      // The unstructured informer of the resource is still its own; everything the factory holds lists once each.
      factory.informer(LooseApples);
      expect(factory.informers()).toHaveLength(2);
      const running = merge(...factory.informers().map((i) => i.store$)).subscribe();
      try {
        await factory.waitForCacheSync();
      } finally {
        running.unsubscribe();
      }
      const lists = api.requests.filter((r) => r.resource === 'myapples' && !r.watch);
      expect(lists).toHaveLength(2);
    } finally {
      await api.close();
    }
  });

  it('a schema built per call, asked for first and again: the second is refused, one informer', async () => {
    const api = await startApiServer();
    api.registerCustomResource(MY_APPLES);
    try {
      const factory = informerFactory(api.kubeConfig);
      factory.informer(apples());
      expect(() => factory.informer(apples())).toThrow(InformerError);
      expect(factory.informers()).toHaveLength(1);
    } finally {
      await api.close();
    }
  });
});
