/**
 * What a deep comparison of two versions of a pod costs in JavaScript, against
 * `JSON.parse` of one: the price of sharing unchanged parts between versions
 * (tried for issue #22, docs/performance.md). CPU time of the main thread.
 *
 *   node bench/micro/deepCompare.ts
 */
import { makePod } from '../workload/pods.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i]!, b[i]!)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let count = 0;
  for (const key in a) {
    count++;
    if (!(key in b) || !deepEqual(a[key]!, b[key]!)) return false;
  }
  for (const _ in b) count--;
  return count === 0;
}

const N = 1000;
const texts = Array.from({ length: N }, (_, i) => JSON.stringify(makePod({ index: i, resourceVersion: i + 1, revision: 0 })));
const cached = texts.map((t) => JSON.parse(t) as Json);
const cpu = () => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};
for (let round = 0; round < 5; round++) {
  const fresh = texts.map((t) => JSON.parse(t) as Json);
  let start = cpu();
  let equal = 0;
  for (let i = 0; i < N; i++) if (deepEqual(fresh[i]!, cached[i]!)) equal++;
  const compare = (cpu() - start) / N;
  start = cpu();
  for (let i = 0; i < N; i++) JSON.parse(texts[i]!);
  const parse = (cpu() - start) / N;
  console.log(`deep comparison of equal versions ${compare.toFixed(1)} µs, JSON.parse ${parse.toFixed(1)} µs a pod (${equal}/${N} equal)`);
}
