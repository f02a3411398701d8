/**
 * The heap a `watchList` informer holds at the peak of a streaming relist, in process:
 * `node --expose-gc bench/micro/streamingRelistHeap.ts OBJECTS [SRC_DIR]`.
 *
 * A fake ListWatch streams OBJECTS ConfigMaps (each parsed from its JSON text, as the transport hands them over) and
 * the initial-events-end bookmark; once synced, the watch expires (410) and the relist streams the same objects at the
 * same resourceVersions. The peak is just before the second bookmark: the cache plus the streaming list's initial
 * objects. Printed: the heap after gc() at that peak over the synced heap, in MB and bytes an object. SRC_DIR: another
 * copy of `src/` (holding `index.ts` and `testing/`, a `node_modules` beside it), for an A/B of versions.
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Subject, filter, firstValueFrom } from 'rxjs';
import type * as Library from '../../src/index.ts';
import type * as Testing from '../../src/testing/index.ts';
import type { WatchFrame } from '../../src/1-transport/listWatch.ts';

const objects = Number(process.argv[2] ?? 20_000);
const src = process.argv[3] ? resolve(process.argv[3]) : join(import.meta.dirname, '../../src');
const lib = (await import(pathToFileURL(join(src, 'index.ts')).href)) as typeof Library;
const testing = (await import(pathToFileURL(join(src, 'testing/index.ts')).href)) as typeof Testing;
const gc =
  (globalThis as { gc?: () => void }).gc ??
  (() => {
    throw new Error('run with node --expose-gc');
  });
const heapMB = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
};
const turn = () => new Promise((done) => setTimeout(done, 5));

const texts = Array.from({ length: objects }, (_, i) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `cm-${i}`,
      namespace: 'default',
      resourceVersion: '5',
      uid: `uid-${i}`,
      labels: { app: 'bench', shard: String(i % 16) },
    },
    data: { payload: `${'x'.repeat(400)}${i}` },
  }),
);
const end = (rv: string) => testing.watchBookmark(rv, { 'k8s.io/initial-events-end': 'true' });
const stream = (watch: Subject<WatchFrame>) => {
  for (const text of texts) watch.next(testing.watchEvent('ADDED', JSON.parse(text) as object));
};

const first = new Subject<WatchFrame>();
const second = new Subject<WatchFrame>();
const lw = testing.fakeListWatch({ watches: [first, second] });
const informer = lib.informer(lw, lib.ConfigMap, { watchList: true, reportUnobservedErrors: false });
let size = 0;
const keep = informer.store$.subscribe((store) => (size = store.size));
await turn();
stream(first);
first.next(end('6'));
await firstValueFrom(informer.synced$.pipe(filter(Boolean)));
await turn();
const synced = heapMB();
first.next(testing.watchStatus(410));
await turn();
if (lw.requests.length !== 2) throw new Error(`expected the streaming relist, got ${lw.requests.length} requests`);
stream(second);
const peak = heapMB();
second.next(end('8'));
await turn();
const after = heapMB();
const row = {
  src: src.replace(join(import.meta.dirname, '../..'), '.'),
  objects: size,
  syncedMB: +synced.toFixed(2),
  peakOverSyncedMB: +(peak - synced).toFixed(2),
  peakBytesPerObject: Math.round(((peak - synced) * 1e6) / objects),
  afterOverSyncedMB: +(after - synced).toFixed(2),
};
console.log(JSON.stringify(row));
keep.unsubscribe();
