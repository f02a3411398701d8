/**
 * The store's own work per watch event, in process, as CPU time of the main
 * thread: the DeltaFIFO's read of the key, the reducer's read, the write.
 * No parsing, no events: what the store costs at a given size.
 *
 *   node bench/micro/storeWrite.ts [pods=1000] [src dir, default ../../src]
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as StoreModule from '../../src/4-store/store.ts';

type Pod = { readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string } };

const pods = Number(process.argv[2] ?? 1000);
const dir = resolve(process.argv[3] ?? join(import.meta.dirname, '..', '..', 'src'));
const { Store } = (await import(pathToFileURL(join(dir, '4-store', 'store.ts')).href)) as typeof StoreModule;
const EVENTS = 100_000;
const namespace = (i: number) => `team-${String(i % 100).padStart(3, '0')}`;
const name = (i: number) => `checkout-abcdefghij-${i}`;
const pod = (i: number, rv: number): Pod => ({ metadata: { name: name(i), namespace: namespace(i), resourceVersion: String(rv) } });

const batch = Store.empty<Pod>().batch();
for (let i = 0; i < pods; i++) batch.write(`${namespace(i)}/${name(i)}`, undefined, pod(i, i));
let store = batch.done();
const events = Array.from({ length: EVENTS }, (_, e) => {
  const i = (Math.imul(e + 1, 2654435761) >>> 0) % pods;
  return { key: `${namespace(i)}/${name(i)}`, object: pod(i, pods + e) };
});
const cpu = () => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};
const start = cpu();
for (const { key, object } of events) {
  store.get(key);
  store = store.write(key, store.get(key), object);
}
console.log(`${dir}: ${pods} cached, ${((cpu() - start) / EVENTS).toFixed(2)} µs CPU per event`);
