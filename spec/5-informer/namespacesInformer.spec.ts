/**
 * An informer over several namespaces whose cluster-wide list is Forbidden (403) falls back to one list and watch per
 * namespace (docs/api.md, "Several namespaces"), whether that list is a plain list or a streaming one (`watchList`),
 * and only while nothing was listed: a 403 on the watch after a good cluster-wide list is reported and retried.
 * audit53: with `watchList: true` the streaming list's 403 (phase `watch`) never fell back; after 10 virtual minutes
 * the informer was unsynced, 18 cluster-wide requests in. At the default options in virtual time; the transport is
 * replaced by in-memory ListWatches (`httpListWatch` is mocked).
 */
import { concat, NEVER, of, throwError, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, informer, InformerError } from '../../src/index.ts';
import type { ListWatchTarget } from '../../src/pipeline.ts';
import { fakeListWatch, listPage, watchBookmark, watchEvent, type FakeListWatch } from '../../src/testing/index.ts';
import type { WatchFrame, WatchOptions } from '../../src/pipeline.ts';

/** What each namespace's ListWatch is ('' the cluster-wide one), made by the test before the informer asks for it. */
const byNamespace = new Map<string, FakeListWatch>();

vi.mock('../../src/1-transport/httpTransport.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/1-transport/httpTransport.ts')>();
  return {
    ...original,
    httpListWatch: (_kc: KubeConfig, target: ListWatchTarget) => {
      const lw = byNamespace.get(target.namespace ?? '');
      if (!lw) throw new Error(`no ListWatch for namespace ${target.namespace}`);
      return lw;
    },
  };
});

afterEach(() => byNamespace.clear());

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

const forbidden = (phase: 'list' | 'watch') =>
  new InformerError('Forbidden', `${phase} /api/v1/configmaps: configmaps is forbidden at the cluster scope`, { phase, status: 403 });

const configMap = (namespace: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', namespace, resourceVersion: '5' },
});

/** A streaming list's answer (watchList): the namespace's one object, then the bookmark that ends the initial events. */
const streamed = (namespace: string): Observable<WatchFrame> =>
  of(watchEvent('ADDED', configMap(namespace)), watchBookmark('7', { 'k8s.io/initial-events-end': 'true' }));

interface Run {
  readonly synced: boolean;
  readonly keys: readonly string[];
  readonly clusterRequests: number;
  readonly namespaceRequests: number;
  readonly forbidden: number;
}

/**
 * Two namespaces (`maxNamespaceWatches: 1`: one cluster-wide list and watch first), ten virtual minutes. `listed`: the
 * cluster-wide list succeeds and its watches are Forbidden; otherwise every cluster-wide request is Forbidden.
 */
function run(watchList: boolean, listed: boolean): Run {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  let result: Run | undefined;
  scheduler.run(({ flush }) => {
    const cluster = fakeListWatch(
      {
        lists: Array.from({ length: 200 }, () => (listed ? of(listPage('7', [configMap('a')])) : throwError(() => forbidden('list')))),
        // A streaming list (listed) streams its list, then its watch is Forbidden: after the list, as a plain list's watch.
        watches: Array.from({ length: 200 }, () => (options: WatchOptions) => {
          const refused = throwError(() => forbidden('watch'));
          return listed && options.sendInitialEvents === true ? concat(streamed('a'), refused) : refused;
        }),
      },
      { scheduler },
    );
    byNamespace.set('', cluster);
    const namespaces = ['a', 'b'].map((ns) => {
      const lw = fakeListWatch(
        {
          lists: Array.from({ length: 20 }, () => of(listPage('7', [configMap(ns)]))),
          watches: Array.from(
            { length: 200 },
            () => (options: WatchOptions) => (options.sendInitialEvents === true ? concat(streamed(ns), NEVER) : NEVER),
          ),
        },
        { scheduler },
      );
      byNamespace.set(ns, lw);
      return lw;
    });
    const inf = informer(kubeConfig(), ConfigMap, { namespaces: ['a', 'b'], maxNamespaceWatches: 1, watchList, scheduler });
    let synced = false;
    let forbiddens = 0;
    let keys: string[] = [];
    const subs = [
      inf.synced$.subscribe((s) => (synced = s)),
      inf.errors$.subscribe((e) => e.reason === 'Forbidden' && forbiddens++),
      inf.store$.subscribe((store) => (keys = store.keys().sort())),
    ];
    scheduler.schedule(() => {
      result = {
        synced,
        keys,
        clusterRequests: cluster.requests.length,
        namespaceRequests: namespaces.reduce((n, lw) => n + lw.requests.length, 0),
        forbidden: forbiddens,
      };
      for (const s of subs) s.unsubscribe();
    }, 10 * 60_000);
    flush();
  });
  return result!;
}

describe('namespacesInformer: the cluster-wide list Forbidden', () => {
  for (const [watchList, how] of [
    [false, 'a plain list (watchList: false)'],
    [true, 'a streaming list (watchList: true; its 403 is in phase watch, audit53: it streamed again for good)'],
  ] as const)
    it(`${how}: one request, then one list and watch per namespace; the 403 not reported`, () => {
      const r = run(watchList, false);
      expect(r.synced).toBe(true);
      expect(r.keys).toEqual(['a/cm', 'b/cm']);
      expect(r.clusterRequests).toBe(1);
      expect(r.namespaceRequests).toBeGreaterThanOrEqual(2);
      expect(r.forbidden).toBe(0);
    });

  for (const watchList of [false, true])
    it(`a 403 on the watch after a good cluster-wide list (watchList: ${watchList}): no fallback, reported, retried`, () => {
      const r = run(watchList, true);
      expect(r.synced).toBe(true);
      expect(r.keys).toEqual(['a/cm']);
      expect(r.namespaceRequests).toBe(0);
      expect(r.forbidden).toBeGreaterThan(1);
      expect(r.clusterRequests).toBeGreaterThan(2);
    });
});
