/**
 * A misspelt option given in a variable (TypeScript checks the excess members of object literals only) or from
 * JavaScript is refused where it enters, with a `TypeError` naming it and the nearest known name: before, it was
 * ignored, and `{ namepsace: 'a' }` cached the whole cluster (review audit44, F1).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { EMPTY, NEVER } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConfigMap, Pod, informer, informerFactory, shardedInformer, type InformerOptions } from '../../src/index.ts';
import { controller, done } from '../../src/controller/index.ts';
import { dynamicInformerFactory } from '../../src/discovery/index.ts';

/** A KubeConfig with a cluster nothing listens on: nothing here subscribes, so no request is made. */
function offlineKc(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }, { name: 'u' });
  return kc;
}
const shards = { shards: 1, shardOf: () => 0, held$: NEVER, owns: () => true, gate: () => EMPTY };

/** Each misspelt option, and what the message must say. */
const MISSPELT: readonly { readonly options: Record<string, unknown>; readonly message: RegExp }[] = [
  { options: { namepsace: 'a', resyncPeriod: 0 }, message: /unknown option `namepsace` \("a"\); did you mean `namespace`\?/ },
  { options: { labelselector: 'app=web' }, message: /unknown option `labelselector` \("app=web"\); did you mean `labelSelector`\?/ },
  { options: { resync: 1000 }, message: /unknown option `resync` \(a number \(1000\)\); known: `namespace`, .*`resyncPeriod`/ },
  {
    options: { http: { requestTimeoutMS: 5 } },
    message: /unknown option `http\.requestTimeoutMS` .*did you mean `http\.requestTimeoutMs`\?/,
  },
  {
    options: { http: { http2: { readIdle: 5 } } },
    message: /unknown option `http\.http2\.readIdle` .*did you mean `http\.http2\.readIdleMs`\?/,
  },
  { options: { backoff: { maxms: 5 } }, message: /unknown option `backoff\.maxms` .*did you mean `backoff\.maxMs`\?/ },
];

describe('an unknown option name is refused where the options enter', () => {
  for (const { options, message } of MISSPELT) {
    const given = options as InformerOptions<Pod>;
    it(`informer(), shardedInformer(), factory.informer() and the factory's defaults: ${JSON.stringify(options)}`, () => {
      expect(() => informer(offlineKc(), Pod, given)).toThrow(TypeError);
      expect(() => informer(offlineKc(), Pod, given)).toThrow(new RegExp(`^informer: ${message.source}`));
      expect(() => shardedInformer(offlineKc(), Pod, shards, given)).toThrow(new RegExp(`^shardedInformer: ${message.source}`));
      expect(() => informerFactory(offlineKc()).informer(Pod, given)).toThrow(new RegExp(`^informerFactory.informer: ${message.source}`));
      if (!('labelselector' in options))
        expect(() => informerFactory(offlineKc(), given as never)).toThrow(new RegExp(`^informerFactory: `));
    });
  }

  it('a per-informer option is no factory default: it would apply to every informer and not be part of its identity', () => {
    for (const name of ['labelSelector', 'fieldSelector', 'namespaces'])
      expect(() => informerFactory(offlineKc(), { [name]: name === 'namespaces' ? ['a'] : 'x=y' } as never)).toThrow(
        new RegExp(`informerFactory: unknown option \`${name}\` .*; it is no factory default: give it to each factory\\.informer\\(\\)`),
      );
  });

  it("the dynamic factory's watch takes its own options only", () => {
    const dynamic = dynamicInformerFactory(offlineKc(), { reportUnobservedErrors: false });
    expect(() => dynamic.watch('all', { metadataonly: true } as never)).toThrow(/did you mean `metadataOnly`\?/);
    // It never took informer options beyond its own: they passed through to the factory, untyped.
    expect(() => dynamic.watch('all', { delivery: 'in-order' } as never)).toThrow(/unknown option `delivery`/);
    expect(() => dynamic.watch('all', { metadataOnly: true, namespace: 'a', resyncPeriod: 0 })).not.toThrow();
  });

  it('controller() refuses a misspelt option (`concurency` ran one key at a time)', () => {
    const pods = informer(offlineKc(), Pod, { reportUnobservedErrors: false });
    const options = { for: pods, reconcile: () => done(), concurency: 2 };
    expect(() => controller(options)).toThrow(TypeError);
    expect(() => controller(options)).toThrow(/^controller: unknown option `concurency` \(a number \(2\)\); did you mean `concurrency`\?/);
  });

  it('every known option is taken, and a member left undefined asks for nothing (a spread of optional settings)', () => {
    const all: InformerOptions<ConfigMap> = {
      namespace: 'a',
      labelSelector: 'app=web',
      fieldSelector: 'metadata.name=x',
      resyncPeriod: 0,
      indexers: {},
      transform: (cm) => cm,
      http: { requestTimeoutMs: 1000, lazyDecode: true, http2: { readIdleMs: 1000 } },
      delivery: 'in-order',
      reportUnobservedErrors: false,
      backoff: { initialMs: 10, maxMs: 100 },
    };
    expect(() => informer(offlineKc(), ConfigMap, all)).not.toThrow();
    expect(() => informer(offlineKc(), ConfigMap, { namespace: 'a', namepsace: undefined } as InformerOptions<ConfigMap>)).not.toThrow();
    expect(() =>
      informerFactory(offlineKc(), { namespace: 'a', delivery: 'in-order', transform: (o) => o }).informer(ConfigMap, all),
    ).not.toThrow();
    const pods = informer(offlineKc(), Pod, { reportUnobservedErrors: false });
    expect(() =>
      controller({ for: pods, reconcile: () => done(), concurrency: 2, name: 'p', reportUnobservedErrors: false }),
    ).not.toThrow();
  });
});
