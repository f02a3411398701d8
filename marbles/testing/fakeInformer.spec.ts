import { describe, expect, it } from 'vitest';
import { map, type Observable } from 'rxjs';
import { z } from 'zod';
import { testScheduler } from '../support/testScheduler.ts';
import { added, deleted, fakeInformer, fakeResource, kubeObj, listed, modified } from '../../src/testing/marbles.ts';
import {
  ConfigMap,
  Deployment,
  Node,
  customResource,
  keyOf,
  kubeObject,
  InformerError,
  type InformerEvent,
  type KubeObject,
} from '../../src/index.ts';
import type { SourceEvent } from '../../src/pipeline.ts';

const Widgets = fakeResource();
const brief = (e: InformerEvent<KubeObject>) => `${e.type} ${e.object.metadata.name}`;
const a = kubeObj('a');
const b = kubeObj('b');
const c = kubeObj('c', { resourceVersion: '2' });

describe('fakeInformer delivery (virtual time)', () => {
  // l: the first list (a, b); r: a relist after a was deleted and c created meanwhile.
  const source = { l: listed('1', a, b), r: listed('2', c, b) };

  it("delivery: 'in-order' tells a relist's missed deletion before the listed objects, as a real in-order informer", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold('l-----r-----|', source);
      const widgets = fakeInformer(Widgets, events, { delivery: 'in-order' });
      expectObservable(widgets.events$.pipe(map(brief))).toBe('(xy)--(zvw)-|', {
        x: 'added a',
        y: 'added b',
        z: 'deleted a',
        v: 'added c',
        w: 'updated b',
      });
      expectSubscriptions(events.subscriptions).toBe('^-----------!');
    });
  });

  it('the default (delta-fifo) tells it after them, and both modes tell plain watch events alike', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = cold('l-----r-----m', { ...source, m: added(kubeObj('d')) });
      expectObservable(fakeInformer(Widgets, events).events$.pipe(map(brief)), '^------------!').toBe('(xy)--(vwz)-n', {
        x: 'added a',
        y: 'added b',
        v: 'added c',
        w: 'updated b',
        z: 'deleted a',
        n: 'added d',
      });
    });
  });

  it("delivery: 'in-order' keeps two DELETEDs of one key apart (the second finds nothing cached and tells nothing)", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = cold('l----d-d', { l: listed('1', a), d: deleted(a) });
      const widgets = fakeInformer(Widgets, events, { delivery: 'in-order' });
      expectObservable(widgets.events$.pipe(map(brief)), '^-------!').toBe('x----z--', { x: 'added a', z: 'deleted a' });
      expectObservable(widgets.store$.pipe(map((store) => store.size)), '^-------!').toBe('(01)-0--', { 0: 0, 1: 1 });
    });
  });
});

describe('fakeInformer keys as a real informer does', () => {
  it('a cluster-scoped resource (Node, Namespace): objects lose their namespace, keyed by name alone', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const nodes = fakeInformer(
        Node,
        cold('l 4ms m 1ms d', {
          l: listed('1', kubeObj<Node>('n1')),
          m: added(kubeObj<Node>('n2', { resourceVersion: '2' })),
          d: deleted(kubeObj<Node>('n1')),
        }),
      );
      const keyed = (e: InformerEvent<Node>) => `${e.type} ${keyOf(e.object)} ${e.object.metadata?.namespace ?? '-'}`;
      expectObservable(nodes.events$.pipe(map(keyed))).toBe('a 4ms b 1ms c', { a: 'added n1 -', b: 'added n2 -', c: 'deleted n1 -' });
      expectObservable(nodes.store$.pipe(map((store) => store.keys().join(',')))).toBe('(ea)-b-c', { e: '', a: 'n1', b: 'n1,n2', c: 'n2' });
    });
  });

  it('a namespaced resource keeps kubeObj’s default namespace', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a'), kubeObj('b', { namespace: 'shop' })) }));
      expectObservable(widgets.store$.pipe(map((store) => store.keys().sort().join(',')))).toBe('(ea)', { e: '', a: 'default/a,shop/b' });
    });
  });
});

describe('kubeObj(resource, name): an object of that resource', () => {
  it("its parts are typed from the object's type, in part: spec, status and data", () => {
    // @ts-expect-error -- replicas is a number
    kubeObj<Deployment>('web', { spec: { replicas: 'three' } });
    // @ts-expect-error -- and so through the resource
    kubeObj(Deployment, 'web', { spec: { replicas: 'three' } });
    // @ts-expect-error -- a ConfigMap's data holds strings
    kubeObj(ConfigMap, 'settings', { data: { level: 3 } });
    // Any field may be left out, at any depth; an unstructured object's parts are anything.
    expect(
      kubeObj(Deployment, 'web', { spec: { replicas: 3, template: { spec: { containers: [{ name: 'app' }] } } } }).spec?.replicas,
    ).toBe(3);
    expect(kubeObj('w', { spec: { anything: ['goes'] } }).spec).toEqual({ anything: ['goes'] });
  });

  it('cluster-scoped (Node, a CRD with scope Cluster): no namespace, even one given; apiVersion and kind from the resource', () => {
    const Gizmos = fakeResource({ plural: 'gizmos', kind: 'Gizmo', namespaced: false });
    expect(kubeObj(Node, 'n1')).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', uid: 'uid-n1', resourceVersion: '1', generation: 1 },
    });
    expect(kubeObj(Gizmos, 'g1', { namespace: 'shop', labels: { a: 'b' } }).metadata).toEqual({
      name: 'g1',
      uid: 'uid-g1',
      resourceVersion: '1',
      generation: 1,
      labels: { a: 'b' },
    });
    expect(keyOf(kubeObj(Gizmos, 'g1'))).toBe('g1');
  });

  it('namespaced: namespace default unless given, as kubeObj(name); the kind given wins', () => {
    expect(kubeObj(Widgets, 'a', { kind: 'Other' })).toMatchObject({
      apiVersion: 'example.com/v1',
      kind: 'Other',
      metadata: { namespace: 'default' },
    });
    expect(kubeObj(Widgets, 'a', { namespace: 'shop' }).metadata.namespace).toBe('shop');
  });

  it('what a Node controller test compares: the cached node equals the node it listed', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const nodes = fakeInformer(Node, cold('l', { l: listed('1', kubeObj(Node, 'n1')) }));
      const cached = nodes.store$.pipe(map((store) => store.get('n1')));
      expectObservable(cached).toBe('(ua)', { u: undefined, a: kubeObj(Node, 'n1') });
    });
  });
});

describe('fakeInformer decodes as a real informer (the same decoder)', () => {
  const Apple = kubeObject({ spec: z.looseObject({ color: z.string() }) });
  type Apple = z.infer<typeof Apple>;
  const Apples = customResource<Apple>({
    group: 'example.com',
    version: 'v1',
    plural: 'apples',
    kind: 'Apple',
    namespaced: true,
    schema: Apple,
  });
  const keys = (store: { keys(): string[] }) => store.keys().sort().join(',');
  /** What a server may send all the same: kubeObj's parts are typed, so a wrong one needs a cast. */
  const NOT_A_STRING = 3 as unknown as string;
  const reported = (error: InformerError) => `${error.reason} ${error.message}`;

  it('an object of another kind is reported on errors$ and not cached, in a list and in a watch event', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const configMaps = fakeInformer(
        ConfigMap,
        cold('l-a', {
          l: listed('1', kubeObj<ConfigMap>('x'), kubeObj(Deployment, 'web') as unknown as ConfigMap),
          a: added(kubeObj(Deployment, 'api', { resourceVersion: '2' }) as unknown as ConfigMap),
        }),
      );
      expectObservable(configMaps.errors$.pipe(map(reported))).toBe('e-f', {
        e: 'ValidationFailed default/web is an apps/v1 Deployment, not a v1 ConfigMap; skipped',
        f: 'ValidationFailed default/api is an apps/v1 Deployment, not a v1 ConfigMap; skipped',
      });
      expectObservable(configMaps.store$.pipe(map(keys))).toBe('(ex)', { e: '', x: 'default/x' });
      expectObservable(configMaps.synced$).toBe('(ft)', { f: false, t: true });
    });
  });

  it("an object failing the resource's schema is reported and not cached; the cache keeps its last valid one", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const red = kubeObj(Apples, 'a', { spec: { color: 'red' } });
      const bad = kubeObj(Apples, 'a', { resourceVersion: '2', spec: { color: NOT_A_STRING } });
      const apples = fakeInformer(Apples, cold('l-m', { l: listed('1', red, kubeObj(Apples, 'b', { spec: {} })), m: modified(bad) }));
      expectObservable(apples.errors$.pipe(map((error) => `${error.reason} ${error.key}`))).toBe('e-f', {
        e: 'ValidationFailed default/b',
        f: 'ValidationFailed default/a',
      });
      expectObservable(apples.store$.pipe(map((store) => store.get('default/a')?.spec.color))).toBe('(ur)', { u: undefined, r: 'red' });
    });
  });

  it('a DELETED whose object fails the schema deletes its key all the same', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const red = kubeObj(Apples, 'a', { spec: { color: 'red' } });
      const apples = fakeInformer(
        Apples,
        cold('l----d', { l: listed('1', red), d: deleted(kubeObj(Apples, 'a', { spec: { color: NOT_A_STRING } })) }),
      );
      expectObservable(apples.store$.pipe(map(keys))).toBe('(ea)-e', { e: '', a: 'default/a' });
    });
  });

  it("the test's objects are cached as they are: kubeObj(name), without apiVersion and kind, is the resource's", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const x = kubeObj<ConfigMap>('x');
      const configMaps = fakeInformer(ConfigMap, cold('l', { l: listed('1', x) }));
      expectObservable(configMaps.store$.pipe(map((store) => store.get('default/x')))).toBe('(ux)', { u: undefined, x });
      expect(x).not.toHaveProperty('kind');
    });
  });
});

describe('fakeInformer checks each marble value at its boundary', () => {
  /** The error the informer's streams end with, as a line. */
  const failed = (values: Record<string, unknown>, marble = 'l') => {
    let message = '';
    testScheduler().run(({ cold }) => {
      fakeInformer(ConfigMap, cold(marble, values) as Observable<SourceEvent<ConfigMap>>).store$.subscribe({
        error: (error: unknown) =>
          (message = error instanceof InformerError ? `${error.reason}: ${error.message}` : `not typed: ${String(error)}`),
      });
    });
    return message;
  };

  it('a letter missing from the values map: a Config error naming the time, the value and the helpers', () => {
    expect(failed({}, '--l')).toBe(
      'Config: fakeInformer(configmaps): the marble value at 2 ms is not a source event: undefined (is its letter missing from the values map?); ' +
        'make each value with listed(), added(), modified(), deleted(), bookmark() or failure() from rx-informer/testing',
    );
  });

  it('an object instead of added(object) or listed(rv, object)', () => {
    expect(failed({ l: kubeObj<ConfigMap>('x') })).toMatch(
      /^Config: fakeInformer\(configmaps\): the marble value at 0 ms is not a source event \(an object itself, or a value without a known type\): \{"metadata":\{"name":"x".*; make each value with listed\(\)/,
    );
  });

  it('a list without its resourceVersion, an item that is no object, an event without its object', () => {
    expect(failed({ l: { type: 'replace', items: [kubeObj('x')] } })).toMatch(
      /is a list without a resourceVersion \(listed\(resourceVersion, \.\.\.objects\)\)/,
    );
    expect(failed({ l: listed('1', null as unknown as ConfigMap) })).toMatch(
      /is a list whose item 0 is not an object: \{"type":"replace","items":\[null\]/,
    );
    expect(failed({ l: { type: 'added', resourceVersion: '1' } })).toMatch(/is an added event without an object/);
  });

  it('an object without a name is what a real informer reports: ValidationFailed on errors$, nothing cached, synced', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const configMaps = fakeInformer(ConfigMap, cold('l', { l: listed('1', { metadata: {} } as ConfigMap) }));
      expectObservable(configMaps.errors$.pipe(map((error) => error.reason))).toBe('v', { v: 'ValidationFailed' });
      expectObservable(configMaps.synced$).toBe('(ft)', { f: false, t: true });
      expectObservable(configMaps.store$.pipe(map((store) => store.size))).toBe('0', { 0: 0 });
    });
  });
});
