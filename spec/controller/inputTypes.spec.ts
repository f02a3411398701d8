// What a controller's inputs accept, at compile time: `npm run typecheck` checks this file (every
// `@ts-expect-error` must still be an error); the test below only runs the checks' function.
import type { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigMap,
  Pod,
  customResource,
  informer,
  kubeObject,
  metadataOnly,
  type Informer,
  type KubeObject,
  type PartialObjectMetadata,
  type Store,
} from '../../src/index.ts';
import { controller, done, type ControllerInput, type ControllerOptions } from '../../src/controller/index.ts';

const MyApple = kubeObject({ spec: z.looseObject({ color: z.string() }) });
type MyApple = z.infer<typeof MyApple>;
const MyApples = customResource({
  group: 'stable.example.com',
  version: 'v1',
  plural: 'myapples',
  kind: 'MyApple',
  namespaced: true,
  schema: MyApple,
});

/** Never called: its body is what the type checker reads. */
function compileOnly(kc: KubeConfig, notKube: Informer<{ readonly metadata: { readonly name: number } }>) {
  const apples = informer(kc, MyApples);
  const pods = informer(kc, Pod);
  const podMeta = informer(kc, metadataOnly(Pod));
  const configMaps = informer(kc, ConfigMap);
  expectTypeOf(podMeta).toEqualTypeOf<Informer<PartialObjectMetadata>>();

  // owns: an informer of a typed custom resource, of metadataOnly objects, of a built-in kind
  controller({ for: configMaps, owns: [apples, podMeta, pods], reconcile: () => done() });
  controller({ for: apples, owns: [podMeta], reconcile: () => done() });
  controller({ for: podMeta, reconcile: () => done() });

  // watches: each entry's map is given its own informer's objects
  controller({
    for: pods,
    watches: [
      {
        informer: configMaps,
        map: (cm) => {
          expectTypeOf(cm).toEqualTypeOf<ConfigMap>();
          return Object.keys(cm.data ?? {});
        },
      },
      {
        informer: apples,
        map: (apple) => {
          expectTypeOf(apple).toEqualTypeOf<MyApple>();
          return [apple.spec.color];
        },
      },
      { informer: podMeta, map: (meta) => [meta.metadata.name] },
    ],
    reconcile: (_key, { cacheOf }) => {
      expectTypeOf(cacheOf(apples)).toEqualTypeOf<Store<MyApple>>();
      return done();
    },
  });

  // Options typed ahead (no W): the entries' maps read KubeObjects, any informer goes in.
  const options: ControllerOptions<Pod> = {
    for: pods,
    owns: [apples],
    watches: [{ informer: apples, map: (object: KubeObject) => [String(object.metadata.name)] }],
    reconcile: () => done(),
  };
  controller(options);
  const input: ControllerInput = apples;
  // Entries of two kinds built ahead: a tuple (`as const`), so that each keeps its kind
  const entries = [
    { informer: configMaps, map: (cm: ConfigMap) => Object.keys(cm.data ?? {}) },
    { informer: apples, map: (apple: MyApple) => [apple.spec.color] },
  ] as const;
  controller({ for: pods, watches: entries, reconcile: () => done() });

  // Still refused:
  // @ts-expect-error an informer of objects that are no KubeObject (metadata.name a number)
  controller({ for: pods, owns: [notKube], reconcile: () => done() });
  // @ts-expect-error a watches map must return keys (strings), not the objects
  controller({ for: pods, watches: [{ informer: apples, map: (apple) => [apple] }], reconcile: () => done() });
  // @ts-expect-error a ConfigMap's map reads no `spec.color`
  controller({ for: pods, watches: [{ informer: configMaps, map: (cm) => [cm.spec.color] }], reconcile: () => done() });
  // @ts-expect-error owns takes informers, not resources
  controller({ for: pods, owns: [MyApples], reconcile: () => done() });
  return input;
}

describe("a controller's inputs (types)", () => {
  it('accept an informer of any kind in owns and watches, with typed watches maps (checked by npm run typecheck)', () => {
    expect(compileOnly).toBeTypeOf('function');
  });
});
