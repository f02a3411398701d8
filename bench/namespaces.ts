/**
 * `npm run bench:namespaces [-- --pods 5000 --namespaces 100 --reps 3]`: where an informer over N namespaces should
 * switch from one list+watch per namespace to one cluster-wide list+watch filtered on the client.
 *
 * One in-process emulator over HTTP/2 holding `--pods` realistic pods (≈ 4.8 KB each, bench/workload)
 * spread over `--namespaces` namespaces (default 100). For N = 1 … 100 namespaces, an informer over the first N is started
 * on a fresh connection in each mode (`maxNamespaceWatches: Infinity`: per namespace; `0`:
 * cluster-wide, other namespaces dropped after their metadata is read) and timed until `synced$`:
 * wall time and this process's CPU (user + system: client AND emulator, as the apiserver's own
 * work is part of the bill), medians over the repetitions. Writes bench/results/namespaces-latest.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filter, firstValueFrom } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';
import { Pod, informer } from '../src/index.ts';
import { startApiServer } from 'rx-informer-emulator';
import { NAMESPACES, makePod } from './workload/pods.ts';

const here = dirname(fileURLToPath(import.meta.url));
const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const PODS = flag('pods', 5_000);
const REPS = flag('reps', 3);
const SPREAD = flag('namespaces', NAMESPACES);
const COUNTS = [1, 2, 4, 8, 16, 32, 64, 100, 250, 1000].filter((n) => n <= SPREAD);

const namespaces = Array.from({ length: SPREAD }, (_, i) => `team-${String(i).padStart(4, '0')}`);
const api = await startApiServer({ http2: true, namespaces, historyLimit: 100 });
for (let index = 0; index < PODS; index++) {
  const pod = makePod({ index, resourceVersion: 0, revision: 0 }) as { metadata: Record<string, unknown> };
  api.create('pods', { ...pod, metadata: { ...pod.metadata, namespace: namespaces[index % SPREAD] } });
}

async function once(n: number, max: number): Promise<{ wallMs: number; cpuMs: number; cached: number }> {
  const kc = new KubeConfig();
  kc.loadFromString(api.kubeConfig.exportConfig());
  const pods = informer(kc, Pod, { namespaces: namespaces.slice(0, n), maxNamespaceWatches: max });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let cached = 0;
  const store = pods.store$.subscribe((s) => (cached = s.size));
  await firstValueFrom(pods.synced$.pipe(filter(Boolean)));
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  store.unsubscribe();
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { wallMs, cpuMs: (used.user + used.system) / 1000, cached };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows: string[] = [];
for (const n of COUNTS) {
  const result: Record<string, { wall: number[]; cpu: number[]; cached: number }> = {};
  for (let rep = 0; rep < REPS; rep++) {
    for (const [mode, max] of [
      ['per-namespace', Number.POSITIVE_INFINITY],
      ['cluster-wide', 0],
    ] as const) {
      const r = await once(n, max);
      const slot = (result[mode] ??= { wall: [], cpu: [], cached: r.cached });
      slot.wall.push(r.wallMs);
      slot.cpu.push(r.cpuMs);
    }
  }
  const per = result['per-namespace']!;
  const wide = result['cluster-wide']!;
  const row = `| ${n} | ${per.cached} | ${median(per.wall).toFixed(0)} | ${median(per.cpu).toFixed(0)} | ${median(wide.wall).toFixed(0)} | ${median(wide.cpu).toFixed(0)} |`;
  rows.push(row);
  console.log(row);
}
await api.close();

const table = [
  `Pods: ${PODS} over ${SPREAD} namespaces (≈ 4.8 KB each), emulator in-process over HTTP/2, ${REPS} repetitions (medians).`,
  '',
  '| namespaces | pods cached | per-namespace: wall ms | per-namespace: CPU ms | cluster-wide: wall ms | cluster-wide: CPU ms |',
  '|---:|---:|---:|---:|---:|---:|',
  ...rows,
  '',
].join('\n');
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', `namespaces-${SPREAD}-latest.md`), table);
console.log(table);
