/**
 * A namespace's first list into the store's trie, in process (written to compare a bottom-up build, 5d0f192, reverted: docs/performance.md): a `MapBuilder` from an empty `PersistentMap`, `size`
 * keys set one after another with a value and a tag, then `done()`, repeated to 100,000 keys a round. Copies of
 * src/ given as arguments are loaded in one process and run alternately, round by round (an A/B on a shared
 * machine: the same load for each). Prints main-thread CPU ms per 100,000 keys set, each round.
 *
 *   node bench/micro/mapBuild.ts [--size 1000] [--rounds 6] SRC_DIR...   (default: this src/)
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as MapModule from '../../src/4-store/persistentMap.ts';

const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const size = flag('size', 1000);
const rounds = flag('rounds', 6);
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
const dirs = positional.length > 0 ? positional.map((d) => resolve(d)) : [join(import.meta.dirname, '..', '..', 'src')];
const maps = await Promise.all(
  dirs.map(async (dir) => ((await import(pathToFileURL(join(dir, '4-store', 'persistentMap.ts')).href)) as typeof MapModule).PersistentMap),
);
const keys = Array.from({ length: size }, (_, i) => `checkout-abcdefghij-${i}`);
const TOTAL = 100_000;

const ms: number[][] = dirs.map(() => []);
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < maps.length; k++) {
    const which = round % 2 === 0 ? k : maps.length - 1 - k;
    const PersistentMap = maps[which]!;
    const t0 = process.threadCpuUsage();
    let entries = 0;
    for (let built = 0; built < TOTAL; built += size) {
      const builder = PersistentMap.empty<number>().edit();
      for (let i = 0; i < size; i++) builder.set(keys[i]!, i, i);
      entries += builder.done().size;
    }
    const t = process.threadCpuUsage(t0);
    if (entries !== Math.ceil(TOTAL / size) * size) throw new Error(`built ${entries}`);
    ms[which]!.push((t.user + t.system) / 1000);
  }
}
dirs.forEach((dir, k) => {
  const sorted = [...ms[k]!].sort((a, b) => a - b);
  console.log(
    `${dir}: ${size} keys a map, CPU ms per 100,000 keys set, by round: ${ms[k]!.map((x) => x.toFixed(1)).join(', ')}; median ${sorted[sorted.length >> 1]!.toFixed(1)}`,
  );
});
