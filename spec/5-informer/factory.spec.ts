import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { VirtualTimeScheduler } from 'rxjs';
import {
  ConfigMap,
  InformerError,
  informerFactory,
  metadataOnly,
  stripManagedFields,
  type InformerOptions,
  type KubeObject,
} from '../../src/index.ts';

/** A KubeConfig nothing connects to: no informer here is subscribed, so no request is made. */
function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const byApp = (cm: ConfigMap) => [cm.metadata.labels?.['app'] ?? ''];
const byOwner = (cm: ConfigMap) => (cm.metadata.ownerReferences ?? []).map((o) => o.uid);
const upperCase = (cm: ConfigMap): ConfigMap => ({
  ...cm,
  data: Object.fromEntries(Object.entries(cm.data ?? {}).map(([k, v]) => [k, v.toUpperCase()])),
});
const scheduler = new VirtualTimeScheduler();

/**
 * Each option that changes what an informer delivers or caches: a first request, a later one that
 * conflicts (an error naming both values), and later ones that agree (the same informer).
 */
const CONFLICTS: readonly {
  readonly option: string;
  readonly first: InformerOptions<ConfigMap>;
  readonly conflicting: InformerOptions<ConfigMap>;
  /** What the error names: the option's path, the first request's value, the later one's. */
  readonly message: readonly string[];
  readonly agreeing: readonly InformerOptions<ConfigMap>[];
}[] = [
  {
    option: 'delivery',
    first: {},
    conflicting: { delivery: 'in-order' },
    message: ["delivery left out ('delta-fifo')", "asks for 'in-order'"],
    agreeing: [{ delivery: 'delta-fifo' }, {}],
  },
  {
    option: 'delivery (stated first)',
    first: { delivery: 'in-order' },
    conflicting: { delivery: 'delta-fifo' },
    message: ["delivery 'in-order'", "asks for 'delta-fifo'"],
    agreeing: [{ delivery: 'in-order' }, {}],
  },
  {
    option: 'resyncPeriod',
    first: { resyncPeriod: 30_000 },
    conflicting: { resyncPeriod: 60_000 },
    message: ['resyncPeriod 30000', 'asks for 60000'],
    agreeing: [{ resyncPeriod: 30_000 }, {}],
  },
  {
    option: 'resyncPeriod (left out first)',
    first: {},
    conflicting: { resyncPeriod: 1_000 },
    message: ['resyncPeriod left out (0)', 'asks for 1000'],
    agreeing: [{ resyncPeriod: 0 }, { resyncPeriod: Infinity }],
  },
  {
    option: 'resyncPeriod (Infinity first: off, as 0)',
    first: { resyncPeriod: Infinity },
    conflicting: { resyncPeriod: 1_000 },
    message: ['resyncPeriod Infinity', 'asks for 1000'],
    agreeing: [{ resyncPeriod: 0 }, { resyncPeriod: Infinity }, {}],
  },
  {
    option: 'transform',
    first: { transform: stripManagedFields },
    conflicting: { transform: upperCase },
    message: ['transform the function stripManagedFields', 'asks for the function upperCase'],
    agreeing: [{ transform: stripManagedFields }, {}],
  },
  {
    option: 'indexers (another function under a name)',
    first: { indexers: { byApp } },
    conflicting: { indexers: { byApp: byOwner } },
    message: ['indexers.byApp the function byApp', 'asks for the function byOwner'],
    agreeing: [{ indexers: { byApp } }, { indexers: {} }, {}],
  },
  {
    option: 'indexers (a name the informer lacks)',
    first: { indexers: { byApp } },
    conflicting: { indexers: { byApp, byOwner } },
    message: ['indexers.byOwner left out', 'asks for the function byOwner'],
    agreeing: [{ indexers: { byApp } }],
  },
  {
    option: 'lazy decoding',
    first: {},
    conflicting: { http: { lazyDecode: true } },
    message: ['http.lazyDecode left out (false)', 'asks for true'],
    agreeing: [{ http: { lazyDecode: false } }, { http: {} }],
  },
  {
    option: 'the wire encoding',
    first: {},
    conflicting: { http: { encoding: 'protobuf' } },
    message: ["http.encoding left out ('json')", "asks for 'protobuf'"],
    agreeing: [{ http: { encoding: 'json' } }, { http: {} }],
  },
  {
    option: 'a reflector option (backoff)',
    first: { backoff: { initialMs: 800, maxMs: 30_000 } },
    conflicting: { backoff: { maxMs: 5_000 } },
    message: ['backoff.maxMs 30000', 'asks for 5000'],
    agreeing: [{ backoff: { initialMs: 800 } }, {}],
  },
  {
    option: 'scheduler',
    first: {},
    conflicting: { scheduler },
    message: ['scheduler left out', 'asks for'],
    agreeing: [{}],
  },
];

describe('informerFactory: a later request for an informer the factory holds', () => {
  for (const { option, first, conflicting, message, agreeing } of CONFLICTS) {
    it(`${option}: a conflicting value is a Config error naming both requests; an agreeing one shares the informer`, () => {
      const factory = informerFactory(kubeConfig());
      const held = factory.informer(ConfigMap, { namespace: 'default', ...first });
      for (const request of agreeing) expect(factory.informer(ConfigMap, { namespace: 'default', ...request })).toBe(held);
      let thrown: unknown;
      try {
        factory.informer(ConfigMap, { namespace: 'default', ...conflicting });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InformerError);
      expect(thrown).toMatchObject({ reason: 'Config', phase: 'config' });
      const text = (thrown as Error).message;
      expect(text).toContain('configmaps in default');
      for (const part of message) expect(text).toContain(part);
      // The informer stays the factory's, unchanged.
      expect(factory.informers()).toEqual([held]);
    });
  }

  it("the factory's defaults count as the first request's options", () => {
    const factory = informerFactory(kubeConfig(), { transform: stripManagedFields, delivery: 'in-order', resyncPeriod: 10_000 });
    const held = factory.informer(ConfigMap);
    expect(factory.informer(ConfigMap, { transform: stripManagedFields, delivery: 'in-order', resyncPeriod: 10_000 })).toBe(held);
    expect(() => factory.informer(ConfigMap, { delivery: 'delta-fifo' })).toThrow(/delivery 'in-order'.*asks for 'delta-fifo'/);
    expect(() => factory.informer(ConfigMap, { transform: (o) => o })).toThrow(
      /the function stripManagedFields; a later request for it asks for the function transform\./,
    );
    const copy = [(cm: ConfigMap) => cm].map((f) => f)[0]!;
    expect(() => factory.informer(ConfigMap, { transform: copy })).toThrow(/asks for the function \(anonymous\)\./);
    const other = informerFactory(kubeConfig());
    other.informer(ConfigMap, { transform: upperCase });
    expect(() => other.informer(ConfigMap, { transform: { upperCase: (cm: ConfigMap) => cm }.upperCase })).toThrow(
      /asks for the function upperCase \(another function of that name\)/,
    );
  });

  it('namespace, namespaces, selectors and metadata-only make another informer, whatever the other options', () => {
    const factory = informerFactory(kubeConfig());
    const full = factory.informer(ConfigMap, { namespace: 'default', delivery: 'in-order', resyncPeriod: 1_000 });
    const others = [
      factory.informer(metadataOnly(ConfigMap), { namespace: 'default' }),
      factory.informer(ConfigMap, { namespace: 'other' }),
      factory.informer(ConfigMap, { namespaces: ['a', 'b'], http: { lazyDecode: true } }),
      factory.informer(ConfigMap, { namespace: 'default', labelSelector: 'app=web' }),
      factory.informer(ConfigMap, { namespace: 'default', fieldSelector: 'metadata.name=x' }),
    ] as readonly unknown[];
    expect(new Set([full, ...others]).size).toBe(6);
    // A set of namespaces in another order is the same informer, and its options are checked likewise.
    expect(factory.informer(ConfigMap, { namespaces: ['b', 'a', 'b'] })).toBe(others[2]);
    expect(() => factory.informer(ConfigMap, { namespaces: ['b', 'a'], http: { lazyDecode: false } })).toThrow(
      /configmaps in a, b was made with http.lazyDecode true; a later request for it asks for false/,
    );
  });

  it('a forgotten informer is no longer compared with: the next request makes a fresh one with its own options', () => {
    const factory = informerFactory(kubeConfig());
    const first = factory.informer(ConfigMap, { delivery: 'in-order' });
    expect(factory.forget(first)).toBe(true);
    const second = factory.informer(ConfigMap, { delivery: 'delta-fifo' });
    expect(second).not.toBe(first);
    expect(() => factory.informer(ConfigMap, { delivery: 'in-order' })).toThrow(InformerError);
  });

  it('the error names a cluster-scoped resource and the selectors of the informer', () => {
    const factory = informerFactory(kubeConfig());
    const nodes = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false } as const;
    const resource = { ...ConfigMap, ...nodes } as unknown as typeof ConfigMap;
    factory.informer(resource, { labelSelector: 'role=edge' });
    expect(() => factory.informer(resource, { labelSelector: 'role=edge', resyncPeriod: 5 })).toThrow(
      /informer for nodes labelSelector role=edge was made with resyncPeriod left out \(0\)/,
    );
  });
});
