// What an informer of one kind may be passed as, at compile time: `npm run typecheck` checks this file (every
// `@ts-expect-error` must still be an error); the test below only runs the checks' function.
import type { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  Pod,
  customResource,
  informer,
  kubeObject,
  metadataOnly,
  waitForCacheSync,
  type Informer,
  type KubeObject,
  type Resource,
  type Store,
} from '../../src/index.ts';
import * as root from '../../src/index.ts';
import { informerMetrics$, serve } from '../../src/metrics/index.ts';
import { shardedInformer, type ShardSource, type ShardedInformer } from '../../src/leaderelection/index.ts';
import { FieldSelector, type FieldSelection } from '../../src/diff.ts';
import { parseRetryAfter, traceFileSink, type RetryAfterOptions, type TraceFileOptions } from '../../src/pipeline.ts';
import type { FieldOf, PartOf, ObjectParts } from '../../src/testing/index.ts';

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

/** A user's own helper that takes any informer. */
function names(informer: Informer<KubeObject>): string {
  return informer.resource.plural;
}

/** Never called: its body is what the type checker reads. */
function compileOnly(kc: KubeConfig, shards: ShardSource, appleCache: Store<MyApple>) {
  // A typed custom resource (its `spec` required): the case a Store<T> invariant in T refused.
  const apples = informer(kc, MyApples);
  const pods = informer(kc, Pod);
  const podMeta = informer(kc, metadataOnly(Pod));
  const sharded = shardedInformer(kc, MyApples, shards);

  expectTypeOf(apples).toExtend<Informer<KubeObject>>();
  expectTypeOf(sharded).toExtend<Informer<KubeObject>>();
  expectTypeOf(sharded).toExtend<ShardedInformer<KubeObject>>();
  const any: Informer<KubeObject> = apples;
  const cache: Store<KubeObject> = appleCache;
  names(apples);
  names(sharded);
  names(podMeta);
  const all: readonly Informer<KubeObject>[] = [apples, pods, podMeta, sharded];
  void waitForCacheSync([apples, pods, sharded]);
  void serve([apples, pods, podMeta, sharded]);
  void informerMetrics$(apples);

  // Still refused: the other way round (an Informer<KubeObject>'s events are no MyApples).
  // @ts-expect-error an informer of any objects is no informer of MyApples
  const notApples: Informer<MyApple> = any;
  // @ts-expect-error nor is its cache a cache of MyApples
  const notAppleCache: Store<MyApple> = cache;
  return [all, notApples, notAppleCache];
}

/** Never called: the types of public arguments and members can be named from the entry of their function (audit44, F6). */
function compileOnlyNames() {
  expectTypeOf<TraceFileOptions>().toEqualTypeOf<NonNullable<Parameters<typeof traceFileSink>[1]>>();
  expectTypeOf<RetryAfterOptions>().toExtend<Parameters<typeof parseRetryAfter>[1]>();
  expectTypeOf<FieldSelection | undefined>().toEqualTypeOf<FieldSelector['root']>();
  expectTypeOf<FieldOf<MyApple, 'spec'>>().toEqualTypeOf<NonNullable<ObjectParts<MyApple>['spec']>>();
  expectTypeOf<PartOf<{ a: string }>>().toEqualTypeOf<{ readonly a?: string }>();
}

/** Never called: what `customResource()` types, with and without a schema (review audit44, F2). */
function compileOnlyResources() {
  const where = { group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple', namespaced: true } as const;
  expectTypeOf(MyApples).toEqualTypeOf<Resource<MyApple>>();
  expectTypeOf(customResource<MyApple>({ ...where, schema: MyApple })).toEqualTypeOf<Resource<MyApple>>();
  // Without a schema only metadata is validated: unstructured objects, whatever one would like them to be.
  expectTypeOf(customResource(where)).toEqualTypeOf<Resource<KubeObject>>();
  // @ts-expect-error a type argument needs the schema that makes it true (it typed unvalidated objects as MyApple)
  const unvalidated = customResource<MyApple>(where);
  return unvalidated;
}

/** Never called: a built-in kind's metadata types client-node's other fields, not `unknown` (review audit44, F4). */
function compileOnlyMetadata(pod: Pod) {
  const finalizing: boolean = pod.metadata.finalizers?.includes('example.com/cleanup') ?? false;
  const generateName: string | undefined = pod.metadata.generateName;
  const managers: (string | undefined)[] = (pod.metadata.managedFields ?? []).map((entry) => entry.manager);
  const grace: number | undefined = pod.metadata.deletionGracePeriodSeconds;
  // Ours where we validate: name is required, labels may be null (as the server may send them).
  const name: string = pod.metadata.name;
  // @ts-expect-error labels may be null, unlike client-node's model
  const labels: Record<string, string> | undefined = pod.metadata.labels;
  return [finalizing, generateName, managers, grace, name, labels];
}

describe('an informer of one kind (types)', () => {
  it('is an Informer<KubeObject> for helpers that take any informer (checked by npm run typecheck)', () => {
    expect(compileOnly).toBeTypeOf('function');
  });

  it('customResource() without a schema is a Resource<KubeObject>, and a type argument needs a schema (npm run typecheck)', () => {
    expect(compileOnlyResources).toBeTypeOf('function');
  });

  it("a built-in kind's metadata types finalizers, generateName, managedFields (npm run typecheck)", () => {
    expect(compileOnlyMetadata).toBeTypeOf('function');
  });

  it('the types of public options and members are exported beside their functions (npm run typecheck)', () => {
    expect(compileOnlyNames).toBeTypeOf('function');
  });

  it("the root's deprecated shardedInformer is rx-informer/leaderelection's, function and type", () => {
    expect(root.shardedInformer).toBe(shardedInformer);
    expectTypeOf<root.ShardedInformer<MyApple>>().toEqualTypeOf<ShardedInformer<MyApple>>();
  });
});
