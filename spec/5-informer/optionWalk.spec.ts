/**
 * Every option of `informer()`, walked on every way of making an informer: `informer()` itself,
 * `shardedInformer()`, an informer over several `namespaces`, and the dynamic factory's `watch()`.
 * Each option either works the same there, or is a type error (checked below at the type level) or a
 * clear run-time error (issue #33). The list is `PROBES`, a `Record` over every key of
 * `InformerOptions`: a new option is a type error here until it has a probe and a verdict per target.
 *
 * The transport is replaced by an in-memory ListWatch (`httpListWatch` records where it was asked to
 * read and with what HTTP options), and the reflector, resync and in-order stages record the options
 * they were built with: so a probe sees an option arrive where `informer()` uses it, and for what can
 * be seen in the cache (namespaces, transform, indexers) the cache itself. Discovery (dynamic target)
 * talks to the emulator.
 */
import { isDeepStrictEqual } from 'node:util';
import { NEVER, Observable, asyncScheduler, filter, firstValueFrom, of, type SchedulerLike, type Subscription } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  ConfigMap,
  informer,
  shardedInformer,
  type FactoryOptions,
  type Informer,
  type InformerOptions,
  type KubeObject,
  type Store,
} from '../../src/index.ts';
import { dynamicInformerFactory, type DynamicWatchOptions } from '../../src/discovery/index.ts';
import { type ShardSource } from '../../src/pipeline.ts';
import type { ListWatch, ListWatchTarget, WatchFrame } from '../../src/pipeline.ts';
import type { HttpTransportOptions } from '../../src/1-transport/httpTransport.ts';
import type { ListAndWatchOptions } from '../../src/2-source/listAndWatch.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

/** What the informer under test asked of the stages (reset before each probe). */
const seen = {
  reads: [] as { target: ListWatchTarget; http: HttpTransportOptions }[],
  reflectors: [] as ListAndWatchOptions<unknown>[],
  resyncs: [] as { periodMs: number; scheduler: SchedulerLike | undefined }[],
  inOrder: 0,
  /** The options (type, code) of the warnings emitted: process.emitWarning is spied on around each probe. */
  warnings: [] as unknown[],
};

const OBJECTS = ['a', 'b', 'c'].flatMap((namespace) =>
  ['x', 'y'].map((name, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, uid: `${namespace}-${name}`, resourceVersion: '5', labels: { app: i === 0 ? 'web' : 'db' } },
    data: { k: 'v' },
  })),
);

/** An in-memory ListWatch over OBJECTS (configmaps only; the namespace of the target honoured, selectors recorded only). */
function memoryListWatch(target: ListWatchTarget): ListWatch {
  const items =
    target.resource.plural !== 'configmaps' ? [] : OBJECTS.filter((o) => !target.namespace || o.metadata.namespace === target.namespace);
  return {
    list: () => of({ items, resourceVersion: '10' }),
    watch: (options): Observable<WatchFrame> => {
      if (options.sendInitialEvents !== true) return NEVER;
      const end = {
        type: 'BOOKMARK',
        object: { metadata: { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } } },
      };
      return new Observable<WatchFrame>((subscriber) => {
        for (const object of items) subscriber.next({ type: 'ADDED', object });
        subscriber.next(end);
      });
    },
  };
}

vi.mock('../../src/1-transport/httpTransport.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/1-transport/httpTransport.ts')>();
  return {
    ...original,
    httpListWatch: (_kc: KubeConfig, target: ListWatchTarget, http: HttpTransportOptions = {}) => {
      seen.reads.push({ target, http });
      return memoryListWatch(target);
    },
  };
});
vi.mock('../../src/2-source/listAndWatch.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/2-source/listAndWatch.ts')>();
  return {
    ...original,
    listAndWatch: (listWatch: ListWatch, options: ListAndWatchOptions<unknown>) => {
      seen.reflectors.push(options);
      return original.listAndWatch(listWatch, options);
    },
  };
});
vi.mock('../../src/3-deltas/resync.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/3-deltas/resync.ts')>();
  return {
    ...original,
    resync: (periodMs: number, scheduler?: SchedulerLike) => {
      seen.resyncs.push({ periodMs, scheduler });
      return original.resync(periodMs, scheduler);
    },
  };
});
vi.mock('../../src/3-deltas/realFifo.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/3-deltas/realFifo.ts')>();
  return {
    ...original,
    realFifo: (...args: Parameters<typeof original.realFifo>) => {
      seen.inOrder++;
      return original.realFifo(...args);
    },
  };
});

/** What a probe looks at once the informer has synced. */
interface Outcome {
  readonly keys: readonly string[];
  readonly objects: readonly KubeObject[];
  readonly store: Store<KubeObject>;
}

interface Probe {
  readonly options: InformerOptions<KubeObject>;
  /** Throws (an `expect`) unless the option took effect. */
  check(outcome: Outcome): void;
}

const reads = () => seen.reads.filter((r) => r.target.resource.plural === 'configmaps');
const someReflector = (key: keyof ListAndWatchOptions<unknown>, value: unknown) =>
  expect(
    seen.reflectors.some((o) => isDeepStrictEqual(o[key], value)),
    `the reflector got ${key}`,
  ).toBe(true);
const reflectorProbe = (key: keyof ListAndWatchOptions<unknown> & keyof InformerOptions<KubeObject>, value: unknown): Probe => ({
  options: { [key]: value },
  check: () => someReflector(key, value),
});
/** A scheduler of its own (asyncScheduler's timing), to be told apart. */
const scheduler: SchedulerLike = {
  now: () => asyncScheduler.now(),
  schedule: asyncScheduler.schedule.bind(asyncScheduler) as SchedulerLike['schedule'],
};
const random = () => 0.25;
const byApp = (o: KubeObject) => [o.metadata.labels?.['app'] ?? ''];
const shout = (o: KubeObject): KubeObject => ({ ...o, data: { k: 'V' } });
const thrower = (): never => {
  throw new Error('no y');
};

const PROBES: { readonly [K in keyof InformerOptions<KubeObject>]-?: Probe } = {
  namespace: {
    options: { namespace: 'b' },
    check: ({ keys }) => expect(keys).toEqual(['b/x', 'b/y']),
  },
  namespaces: {
    options: { namespaces: ['c', 'a'] },
    check: ({ keys }) => expect(keys).toEqual(['a/x', 'a/y', 'c/x', 'c/y']),
  },
  maxNamespaceWatches: {
    // Two namespaces, at most one watched on its own: one cluster-wide read.
    options: { namespaces: ['a', 'b'], maxNamespaceWatches: 1 },
    check: ({ keys }) => {
      expect(keys).toEqual(['a/x', 'a/y', 'b/x', 'b/y']);
      expect(reads().map((r) => r.target.namespace ?? '')).toEqual(['']);
    },
  },
  labelSelector: {
    options: { labelSelector: 'app=web' },
    check: () => expect(reads().length > 0 && reads().every((r) => r.target.labelSelector === 'app=web')).toBe(true),
  },
  fieldSelector: {
    options: { fieldSelector: 'metadata.name=x' },
    check: () => expect(reads().length > 0 && reads().every((r) => r.target.fieldSelector === 'metadata.name=x')).toBe(true),
  },
  resyncPeriod: {
    options: { resyncPeriod: 12_345 },
    check: () => expect(seen.resyncs.map((r) => r.periodMs)).toContain(12_345),
  },
  indexers: {
    options: { indexers: { byApp } },
    check: ({ store }) => {
      const web = store.byIndex('byApp', 'web');
      expect(web.length > 0 && web.length === store.size / 2 && web.every((o) => o.metadata.name === 'x')).toBe(true);
    },
  },
  transform: {
    options: { transform: shout },
    check: ({ objects }) => expect(objects.length > 0 && objects.every((o) => (o as { data?: { k?: string } }).data?.k === 'V')).toBe(true),
  },
  http: {
    options: { http: { userAgent: 'option-walk/1', requestTimeoutMs: 4_321 } },
    check: () =>
      expect(reads().length > 0 && reads().every((r) => r.http.userAgent === 'option-walk/1' && r.http.requestTimeoutMs === 4_321)).toBe(
        true,
      ),
  },
  delivery: {
    options: { delivery: 'in-order' },
    check: () => expect(seen.inOrder).toBeGreaterThan(0),
  },
  pageSize: reflectorProbe('pageSize', 7),
  watchList: reflectorProbe('watchList', true),
  minWatchTimeoutSeconds: reflectorProbe('minWatchTimeoutSeconds', 123),
  idleTimeoutMs: reflectorProbe('idleTimeoutMs', 45_678),
  busyIdleTimeoutMs: reflectorProbe('busyIdleTimeoutMs', 3_456),
  stallMarginMs: reflectorProbe('stallMarginMs', 2_345),
  bookmarkTimeoutMs: reflectorProbe('bookmarkTimeoutMs', 99_999),
  maxListPages: reflectorProbe('maxListPages', 77),
  maxListObjects: reflectorProbe('maxListObjects', 7_777),
  maxListDurationMs: reflectorProbe('maxListDurationMs', 77_777),
  backoff: reflectorProbe('backoff', { initialMs: 11, maxMs: 22 }),
  scheduler: {
    options: { scheduler, resyncPeriod: 60_000 },
    check: () => {
      someReflector('scheduler', scheduler);
      expect(seen.resyncs.some((r) => r.scheduler === scheduler)).toBe(true);
    },
  },
  random: reflectorProbe('random', random),
  reportUnobservedErrors: {
    // A transform that throws for y: a TransformError nobody listens to, which would be reported by default.
    options: { reportUnobservedErrors: false, transform: (o) => (o.metadata.name === 'y' ? thrower() : o) },
    check: () => expect(seen.warnings).toEqual([]),
  },
};

let latestStore: Store<KubeObject> | undefined;

/** Where an option is not that of `informer()`: a type error (and maybe a run-time one), or taken over by another option. */
type Verdict = 'same' | 'type and run-time error' | 'type error' | 'replaced by namespaces';

/** How each way of making an informer takes each option. */
const TARGETS: Record<
  string,
  { readonly base: InformerOptions<KubeObject>; readonly verdicts: Partial<Record<keyof InformerOptions<KubeObject>, Verdict>> }
> = {
  'informer()': { base: {}, verdicts: {} },
  'shardedInformer()': { base: {}, verdicts: { maxNamespaceWatches: 'type and run-time error' } },
  'informer({ namespaces })': { base: { namespaces: ['a', 'b', 'c'] }, verdicts: { namespace: 'replaced by namespaces' } },
  // watch() takes the informer-level options, `factoryOptions` the rest; `indexers` neither (a type error only: JavaScript passes them on).
  'dynamicInformerFactory().watch()': { base: {}, verdicts: { indexers: 'type error' } },
};

// The type-level half: what each target does not take is exactly what its verdicts say.
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
const shardedLacks: Equal<
  Exclude<keyof InformerOptions<KubeObject>, keyof NonNullable<Parameters<typeof shardedInformer>[3]>>,
  'maxNamespaceWatches'
> = true;
const dynamicLacks: Equal<Exclude<keyof InformerOptions<KubeObject>, keyof DynamicWatchOptions | keyof FactoryOptions>, 'indexers'> = true;

const everything: ShardSource = {
  shards: 1,
  shardOf: () => 0,
  held$: of(new Set([0])),
  owns: () => true,
  gate: (_key, work) => firstValueFrom(of(work())) as never,
};

let api: ApiServer | undefined;
beforeAll(async () => {
  api = await startApiServer();
});
afterAll(async () => {
  await api?.close();
});
beforeEach(() => {
  seen.reads = [];
  seen.reflectors = [];
  seen.resyncs = [];
  seen.inOrder = 0;
  seen.warnings = [];
  latestStore = undefined;
  const warn = vi.spyOn(process, 'emitWarning').mockImplementation((...args: unknown[]) => {
    seen.warnings.push(args[1]);
  });
  return () => warn.mockRestore();
});

/** Builds the informer a target makes with these options, and resolves once it has synced (the subscription kept in `running`). */
async function build(target: string, options: InformerOptions<KubeObject>, running: Subscription[]): Promise<Informer<KubeObject>> {
  const kc = api!.kubeConfig;
  let cache: Informer<KubeObject>;
  if (target === 'informer()' || target === 'informer({ namespaces })') cache = informer(kc, ConfigMap as never, options);
  else if (target === 'shardedInformer()') cache = shardedInformer(kc, ConfigMap as never, everything, options);
  else {
    const { namespace, namespaces, labelSelector, fieldSelector, resyncPeriod, ...rest } = options;
    const watchOptions: DynamicWatchOptions = { namespace, namespaces, labelSelector, fieldSelector, resyncPeriod };
    const dynamic = dynamicInformerFactory(kc, { factoryOptions: rest as FactoryOptions, debounceMs: 10 });
    cache = await new Promise<Informer<KubeObject>>((resolve, reject) => {
      running.push(
        dynamic.watch(['configmaps'], watchOptions).subscribe({
          next: (e) => e.type === 'started' && resolve(e.informer),
          error: reject,
        }),
      );
    });
  }
  running.push(cache.store$.subscribe((store) => (latestStore = store)));
  await firstValueFrom(cache.synced$.pipe(filter(Boolean)));
  return cache;
}

describe('every option of informer(), on every way of making an informer', () => {
  it('the type-level verdicts hold (a target lacking an option not in its verdicts fails to compile)', () => {
    expect([shardedLacks, dynamicLacks]).toEqual([true, true]);
  });

  for (const [target, { base, verdicts }] of Object.entries(TARGETS)) {
    for (const [option, probe] of Object.entries(PROBES) as [keyof InformerOptions<KubeObject>, Probe][]) {
      const verdict = verdicts[option] ?? 'same';
      it(`${target}: ${option} (${verdict})`, async () => {
        const running: Subscription[] = [];
        try {
          const options = { ...base, ...probe.options };
          if (verdict === 'type and run-time error') {
            await expect(build(target, options, running)).rejects.toMatchObject({
              reason: 'Config',
              message: expect.stringContaining(option),
            });
            return;
          }
          await build(target, options, running);
          const store = latestStore!;
          const outcome: Outcome = { keys: store.keys().sort(), objects: store.list(), store };
          if (verdict === 'same' || verdict === 'type error') probe.check(outcome);
          else expect(() => probe.check(outcome)).toThrow();
        } finally {
          for (const s of running) s.unsubscribe();
        }
      });
    }
  }
});
