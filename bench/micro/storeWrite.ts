/**
 * The store's own work per watch event, in process, as CPU time of the main
 * thread: the DeltaFIFO's read of the key, the reducer's read, the write.
 * No parsing, no events: what the store costs at a given size.
 *
 * With --expose-gc, also what its writes leave to the collector: the young
 * generation's collections per 1,000 events, and the long-lived garbage they
 * made (bytes per event promoted to the old generation and dead by the end:
 * old-space use before a full collection less after it, when none ran during
 * the events; the objects the writes replaced included: `--map` gives that
 * baseline), which in an informer the concurrent marker and sweeper pay for.
 *
 * `--reads N` (default 2) sets the reads before each write (0 and 1: the reducer's watch update
 * since and before `Store.put`, with no DeltaFIFO read); `--put` writes with `Store.put` (one walk that
 * finds the old object), after `--reads` reads (default then 0).
 *
 *   node [--expose-gc] bench/micro/storeWrite.ts [pods=1000] [src dir, default ../../src] [--map] [--reads N] [--put]
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import type * as StoreModule from '../../src/4-store/store.ts';

type Pod = { readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string } };

const pods = Number(process.argv[2] ?? 1000);
const dir = resolve(process.argv[3]?.startsWith('--') === false ? process.argv[3] : join(import.meta.dirname, '..', '..', 'src'));
const usePut = process.argv.includes('--put');
const readsAt = process.argv.indexOf('--reads');
const reads = readsAt < 0 ? (usePut ? 0 : 2) : Number(process.argv[readsAt + 1]);
const { Store, putInStore } = (await import(pathToFileURL(join(dir, '4-store', 'store.ts')).href)) as typeof StoreModule;
const EVENTS = 100_000;
const namespace = (i: number) => `team-${String(i % 100).padStart(3, '0')}`;
const name = (i: number) => `checkout-abcdefghij-${i}`;
const pod = (i: number, rv: number): Pod => ({ metadata: { name: name(i), namespace: namespace(i), resourceVersion: String(rv) } });

const batch = Store.empty<Pod>().batch();
for (let i = 0; i < pods; i++) batch.write(`${namespace(i)}/${name(i)}`, undefined, pod(i, i));
let store = batch.done();
/** --map: a plain Map instead, for reference (the replaced objects themselves are garbage either way). */
const useMap = process.argv.includes('--map');
const map = new Map<string, Pod>(useMap ? store.entries() : []);
const events = Array.from({ length: EVENTS }, (_, e) => {
  const i = (Math.imul(e + 1, 2654435761) >>> 0) % pods;
  return { key: `${namespace(i)}/${name(i)}`, object: pod(i, pods + e) };
});
const cpu = () => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};
const gc = (globalThis as { gc?: () => void }).gc;
const oldSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;
const collections = { minor: 0, major: 0 };
const observer = new PerformanceObserver((list) => {
  // kind 1: a scavenge (minor); 2, 4: mark-compact, incremental marking (major).
  for (const entry of list.getEntries()) {
    if ((entry as { detail?: { kind?: number } }).detail?.kind === 1) collections.minor++;
    else collections.major++;
  }
});
gc?.();
gc?.();
const oldBefore = oldSpace();
observer.observe({ entryTypes: ['gc'] });
const start = cpu();
if (useMap) {
  for (const { key, object } of events) {
    map.get(key);
    map.get(key);
    map.set(key, object);
  }
} else {
  const replaced: { previous: Pod | undefined } = { previous: undefined };
  let found = 0;
  for (const { key, object } of events) {
    let old: Pod | undefined;
    for (let r = 0; r < reads; r++) old = store.get(key);
    if (usePut) store = putInStore(store, key, object, replaced);
    else store = store.write(key, old ?? store.get(key), object);
    if ((usePut ? replaced.previous : old) !== undefined) found++;
  }
  if (found !== EVENTS) throw new Error(`${found} of ${EVENTS} writes found their key`);
}
const spent = cpu() - start;
await new Promise((resolve) => setTimeout(resolve, 50));
observer.disconnect();
const oldAfter = oldSpace();
gc?.();
const garbage = oldAfter - oldSpace();
const gcText = gc
  ? `, ${((collections.minor * 1000) / EVENTS).toFixed(2)} scavenges per 1,000 events, ` +
    (collections.major === 0
      ? `${(garbage / EVENTS).toFixed(0)} bytes of long-lived garbage per event`
      : `${collections.major} major collections ran`)
  : '';
console.log(
  `${useMap ? 'Map' : `${dir} (${reads} reads, ${usePut ? 'put' : 'write'})`}: ${pods} cached, ${(spent / EVENTS).toFixed(2)} µs CPU per event${gcText} (old space ${(oldBefore / 1e6) | 0} MB before)`,
);
