/**
 * What an update costs for an object with many index values (one index function returning N values, shifted by one
 * at each update: one value leaves, one comes). audit42 found it quadratic (`includes` in a loop). Wall time of the
 * main thread; noisy on a shared machine: compare two trees in interleaved runs.
 *
 *   node bench/micro/manyIndexValues.ts [path/to/src/index.ts]
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

type Obj = { metadata: { name: string; namespace: string; resourceVersion: string }; n: number };
type StoreModule = typeof import('../../src/index.ts');

const from = process.argv[2] ? pathToFileURL(resolve(process.argv[2])).href : '../../src/index.ts';
const { Store } = (await import(from)) as StoreModule;

for (const N of [100, 1000, 3000, 10000]) {
  const many = (o: Obj) => Array.from({ length: N }, (_, i) => `v${i + o.n}`);
  let s = Store.empty<Obj>({ many }).write('ns/x', undefined, { metadata: { name: 'x', namespace: 'ns', resourceVersion: '1' }, n: 0 });
  const R = N >= 3000 ? 3 : 20;
  const t0 = performance.now();
  for (let k = 1; k <= R; k++) {
    s = s.write('ns/x', s.get('ns/x'), { metadata: { name: 'x', namespace: 'ns', resourceVersion: String(k) }, n: k });
  }
  console.log(`${N} values: ${((performance.now() - t0) / R).toFixed(2)} ms per update that shifts them by one`);
}
