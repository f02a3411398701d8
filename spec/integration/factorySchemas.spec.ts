// One factory shared by unstructured and typed requests for one custom resource (the dynamic factory's `{ factory }`,
// docs/dynamic-and-metadata.md): each schema gets its own informer, so typed objects have run the typed schema
// (review audit44's F3: the typed request was handed the unstructured informer, cast).
import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import { z } from 'zod';
import { customResource, informerFactory, kubeObject, type Informer, type KubeObject } from '../../src/index.ts';
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
