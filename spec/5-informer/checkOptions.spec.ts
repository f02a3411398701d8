/**
 * What a JavaScript caller (or a cast) hands an informer with the wrong type is refused where it enters, with a
 * `TypeError` naming the option and what was given: before, it gave a silently wrong cache (audit19, findings 1-3).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { EMPTY, NEVER, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  ConfigMap,
  Pod,
  handleEvents,
  informer,
  informerFactory,
  shardedInformer,
  type EventHandler,
  type InformerOptions,
  type Resource,
} from '../../src/index.ts';
import { dynamicInformerFactory } from '../../src/discovery/index.ts';
import { fakeListWatch, listPage } from '../../src/testing/index.ts';

/** A KubeConfig with a cluster nothing listens on: nothing here subscribes, so no request is made. */
function offlineKc(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }, { name: 'u' });
  return kc;
}
const loose = (options: Record<string, unknown>) => options as unknown as InformerOptions<Pod>;
const shards = { shards: 1, shardOf: () => 0, held$: NEVER, owns: () => true, gate: () => EMPTY };

/** Each wrong option, and what the message must say (the option, what was given, the right form). */
const WRONG: readonly { readonly options: Record<string, unknown>; readonly message: RegExp }[] = [
  {
    options: { namespace: ['shop', 'ops'] },
    message: /`namespace` must be one namespace as a string \(several: `namespaces`\), got an array \(\["shop","ops"\]\)/,
  },
  { options: { namespaces: 'shop' }, message: /`namespaces` must be an array of strings \(one: `namespace`, or \[name\]\), got "shop"/ },
  { options: { namespaces: ['shop', 3] }, message: /`namespaces` must be an array of strings, got an array \(\["shop",3\]\)/ },
  {
    options: { labelSelector: { app: 'web' } },
    message: /`labelSelector` must be a selector string, e\.g\. 'app=web,tier!=db', got an object \(\{"app":"web"\}\)/,
  },
  { options: { fieldSelector: ['status.phase=Running'] }, message: /`fieldSelector` must be a selector string.*got an array/ },
  { options: { resyncPeriod: '30s' }, message: /`resyncPeriod` must be a number of milliseconds \(0: no resync\), got "30s"/ },
  { options: { resyncPeriod: -1 }, message: /`resyncPeriod` must be a number of milliseconds/ },
  { options: { transform: 'strip' }, message: /`transform` must be a function, got "strip"/ },
  { options: { delivery: 'fifo' }, message: /`delivery` must be 'delta-fifo' or 'in-order', got "fifo"/ },
  { options: { indexers: { byNode: undefined } }, message: /index "byNode" must be a function \(object\) => string\[\], got undefined/ },
  { options: { indexers: [(p: unknown) => [String(p)]] }, message: /`indexers` must be an object of index functions.*got an array/ },
];

describe('wrong option types are refused where the options enter', () => {
  for (const { options, message } of WRONG) {
    const name = JSON.stringify(options);
    it(`informer(kc, Pod, ${name})`, () => {
      expect(() => informer(offlineKc(), Pod, loose(options))).toThrow(TypeError);
      expect(() => informer(offlineKc(), Pod, loose(options))).toThrow(message);
    });
    it(`informer(listWatch, Pod, ${name})`, () => {
      const lw = fakeListWatch({ lists: [of(listPage('1', []))], watches: [NEVER] });
      expect(() => informer(lw, Pod, loose(options))).toThrow(message);
    });
    it(`factory.informer(Pod, ${name}), shardedInformer, dynamic watch`, () => {
      expect(() => informerFactory(offlineKc()).informer(Pod, loose(options))).toThrow(message);
      expect(() => shardedInformer(offlineKc(), Pod, shards, loose(options))).toThrow(message);
      const dynamic = dynamicInformerFactory(offlineKc(), { reportUnobservedErrors: false });
      const watchOptions = Object.fromEntries(Object.entries(options).filter(([k]) => k !== 'transform' && k !== 'delivery'));
      if (Object.keys(watchOptions).length > 0) expect(() => dynamic.watch('all', watchOptions as never)).toThrow(message);
    });
  }

  it("the factory's defaults are checked when it is made", () => {
    expect(() => informerFactory(offlineKc(), { namespace: ['a', 'b'] } as never)).toThrow(/informerFactory: `namespace` must be/);
  });

  it('every option of the right type is taken, as before', () => {
    const good = { namespace: 'shop', labelSelector: 'app=web', fieldSelector: 'status.phase=Running', resyncPeriod: 0 };
    expect(() => informer(offlineKc(), Pod, good)).not.toThrow();
    expect(() => informer(offlineKc(), Pod, { namespaces: ['shop', 'ops'], delivery: 'in-order', transform: (p) => p })).not.toThrow();
    expect(() => informerFactory(offlineKc(), { namespace: 'shop' }).informer(Pod, { namespaces: [] })).not.toThrow();
  });

  it('what worked before the checks still does: null for none, a Set of namespaces (audit21)', () => {
    const none = loose({ namespace: null, labelSelector: null, fieldSelector: null });
    expect(() => informer(offlineKc(), Pod, none)).not.toThrow();
    expect(() => informerFactory(offlineKc()).informer(Pod, none)).not.toThrow();
    expect(() => informer(offlineKc(), Pod, loose({ namespaces: new Set(['shop', 'ops']) }))).not.toThrow();
    expect(() => informer(offlineKc(), Pod, loose({ namespaces: new Map([['shop', 'ops']]) }))).toThrow(
      /`namespaces` must be an array of strings, got a Map \(\[\["shop","ops"\]\]\)/,
    );
    expect(() => informer(offlineKc(), Pod, loose({ namespaces: new Set(['shop', 3]) }))).toThrow(/got a Set \(\["shop",3\]\)/);
  });
});

describe('a resource without a schema is refused at informer()', () => {
  const bare = { group: 'g', version: 'v1', plural: 'things', kind: 'Thing', namespaced: true } as Resource;
  it('names the resource and customResource()', () => {
    expect(() => informer(offlineKc(), bare)).toThrow(TypeError);
    expect(() => informer(offlineKc(), bare)).toThrow(/informer: the resource things\.g has no schema: build it with customResource\(/);
    expect(() => informerFactory(offlineKc()).informer(bare)).toThrow(/things\.g has no schema/);
    expect(() => shardedInformer(offlineKc(), bare, shards)).toThrow(/things\.g has no schema/);
  });
  it('a resource name instead of a resource', () => {
    expect(() => informer(offlineKc(), 'pods' as unknown as Resource)).toThrow(/expected a resource \(Pod, Deployment, customResource/);
  });
});

describe("on() refuses client-node's handler shapes, and takes every one of its own", () => {
  const on = (handler: unknown, ...rest: unknown[]) => {
    const inf = informer(offlineKc(), ConfigMap, { reportUnobservedErrors: false });
    return () => (inf.on as (...args: unknown[]) => { unsubscribe(): void })(handler, ...rest).unsubscribe();
  };
  it("on('add', cb)", () => {
    expect(on('add', () => {})).toThrow(TypeError);
    expect(on('add', () => {})).toThrow(/on\(\): expected one handler.*got "add" \(and 1 more argument\); .*docs\/migrating\.md/);
  });
  it('on({ add, update, delete })', () => {
    expect(on({ add: () => {}, update: () => {}, delete: () => {} })).toThrow(
      /got an object with add, update, delete; .*docs\/migrating\.md/,
    );
  });
  it('no handler, a handler that is no function', () => {
    expect(on({})).toThrow(/got an object with none of them/);
    expect(on(undefined)).toThrow(/got undefined/);
    expect(on('add')).toThrow(/got "add"/);
    expect(on({ added: 'log' })).toThrow(/its added is string, not a function/);
  });
  it('every valid shape is taken', () => {
    expect(on(() => {})).not.toThrow();
    expect(on({ added: () => {} })).not.toThrow();
    expect(on({ updated: () => {}, deleted: () => {} })).not.toThrow();
    expect(on({ added: () => {}, updated: undefined })).not.toThrow();
    class Handlers {
      added(): void {}
    }
    expect(on(new Handlers())).not.toThrow();
    // Members beside ours are the handler's own business, even with client-node's names (audit21: these worked before).
    class Reconciler {
      added(): void {}
      update(): void {}
    }
    expect(on(new Reconciler())).not.toThrow();
    expect(on({ added: () => {}, error: () => {} })).not.toThrow();
    expect(on({ added: () => {}, delete: () => {} })).not.toThrow();
    // Arguments after a valid handler are ignored, as before: `handlers.forEach(informer.on)`.
    expect(on(() => {}, 0, [])).not.toThrow();
    expect(on({ added: () => {} }, { signal: undefined })).not.toThrow();
  });
  it('handleEvents() refuses the same', () => {
    expect(() => handleEvents({ add: () => {} } as unknown as EventHandler<ConfigMap>)).toThrow(/handleEvents: expected one handler/);
  });
});
