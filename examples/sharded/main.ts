/**
 * `npm run example:sharded -- [--pods N] [--fast] [--json]`: starts the API-server emulator with
 * 30,000 pods, three replicas of a sharded pod cache and one unsharded informer for
 * comparison, each in its own process; prints what each caches and its heap; kills one
 * replica (SIGKILL: no release) and shows its shards cached again by the other two. Default
 * Lease timing; `--fast`: lease 4 s, renew deadline 3 s, retry 1 s (small runs, as the spec's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startApiServer } from 'rx-informer-emulator';
import { LineFolder } from './foldLines.ts';

const json = process.argv.includes('--json');
const podsAt = process.argv.indexOf('--pods');
const PODS = podsAt >= 0 ? Number(process.argv[podsAt + 1]) : 30_000;
const SHARDS = 12;
const fast = process.argv.includes('--fast');
const lease = fast
  ? { duration: 4, bound: 'lease 4 s + a retry period of 1 s' }
  : { duration: 15, bound: 'lease 15 s + a retry period of 2 s' };
const started = Date.now();
const t = (at = Date.now()) => `+${((at - started) / 1000).toFixed(1)}s`;
const print = (line: string) => {
  if (!json) console.log(line);
};
/** The replicas' warnings (stderr), each kind once, then how many more at each progress line; VERBOSE: all of them. */
const verbose = process.env['VERBOSE'] !== undefined;
const warnings = new LineFolder((line) => process.stderr.write(`${line}\n`));

const api = await startApiServer({ namespaces: ['demo'] });
for (let i = 0; i < PODS; i++) {
  const app = ['checkout', 'payments', 'catalog', 'search', 'frontend'][i % 5]!;
  api.create('pods', {
    metadata: {
      name: `${app}-${i}`,
      namespace: `team-${i % 20}`,
      labels: { app, tier: i % 3 ? 'web' : 'worker' },
      annotations: { 'example.com/owner': `team-${i % 20}` },
    },
    spec: {
      containers: [
        {
          name: app,
          image: `registry.example.com/${app}:1.${i % 7}.0`,
          env: [{ name: 'MODE', value: 'production' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
        },
        { name: 'sidecar', image: 'registry.example.com/proxy:2.1.0', ports: [{ containerPort: 15001 }] },
      ],
      nodeName: `node-${i % 50}`,
    },
    status: { phase: 'Running', podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
  });
}
print(`${t()} emulator: ${PODS} pods in 20 namespaces, ${SHARDS} shards`);
const dir = mkdtempSync(join(tmpdir(), 'rx-informer-sharded-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, api.kubeConfig.exportConfig());

interface Report {
  readonly at: number;
  readonly identity: string;
  readonly owned: readonly number[];
  readonly cached: number;
  readonly heapMB: number;
}
const replicaTs = fileURLToPath(new URL('./replica.ts', import.meta.url));
const children = new Map<string, ChildProcess>();
const latest = new Map<string, Report>();
let onReport = () => undefined as void;
const start = (identity: string, ...args: string[]) => {
  const child = spawn(process.execPath, ['--expose-gc', replicaTs, kubeconfig, identity, ...args, ...(fast ? ['--fast'] : [])], {
    stdio: ['ignore', 'pipe', verbose ? 'inherit' : 'pipe'],
  });
  children.set(identity, child);
  if (child.stderr) createInterface({ input: child.stderr }).on('line', (line) => warnings.add(line));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      latest.set(identity, JSON.parse(line) as Report);
    } catch {
      return;
    }
    onReport();
  });
};
let finished = false;
/** SIGTERM to `child` unless it has exited; resolves once it has. */
const stopped = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
const finish = async (code: number, summary: Record<string, unknown>) => {
  if (finished) return;
  finished = true;
  warnings.flush();
  // The replicas leave the group, wait for their Leases' releases and exit on SIGTERM (replica.ts: `released$`,
  // 5 × requestTimeoutMs at worst): the emulator closes once they all have, not after a guess at how long that takes.
  await Promise.all([...children.values()].map(stopped));
  const exits = Object.fromEntries([...children].map(([identity, child]) => [identity, child.exitCode]));
  /** Each Lease's holder as the replicas left it: "" once released. */
  const leases = Object.fromEntries(
    api
      .list('leases', 'demo')
      .map((l) => [String(l.metadata?.['name']), (l['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity]),
  );
  await api.close();
  summary = { ...summary, exits, leases };
  if (json) console.log(JSON.stringify(summary));
  else if (code !== 0) console.log(JSON.stringify(summary, null, 1));
  process.exit(code);
};
// A SIGTERM or Ctrl-C to this process alone stops the replicas too (they would run on, orphaned, until their timers).
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void finish(signal === 'SIGINT' ? 130 : 143, { error: `stopped by ${signal}` }));
const deadline = setTimeout(() => void finish(1, { error: 'not settled within 240 s', replicas: [...latest.values()] }), 240_000);

/** Resolves once the live replicas own every shard between them, balanced, and cache every pod between them. */
const settled = (live: string[]) =>
  new Promise<Report[]>((resolve) => {
    // Under load this takes a while: a line every 10 s says how far it is (and folds the warnings meanwhile).
    const progress = setInterval(() => {
      const reported = live.filter((id) => latest.has(id));
      const cached = reported.reduce((n, id) => n + latest.get(id)!.cached, 0);
      print(`${t()} waiting for replicas (${reported.length}/${live.length} reported, ${cached}/${PODS} pods cached)`);
      warnings.flush();
    }, 10_000);
    onReport = () => {
      const reports = live.map((id) => latest.get(id));
      if (reports.some((r) => r === undefined)) return;
      const owned = reports.flatMap((r) => r!.owned);
      const cap = Math.ceil(SHARDS / live.length);
      const balanced = reports.every((r) => r!.owned.length <= cap);
      const cached = reports.reduce((n, r) => n + r!.cached, 0);
      if (
        owned.length === SHARDS &&
        new Set(owned).size === SHARDS &&
        balanced &&
        cached === PODS &&
        (latest.get('unsharded')?.cached ?? 0) === PODS
      ) {
        clearInterval(progress);
        resolve(reports as Report[]);
      }
    };
  });
/** Once settled, a few seconds for lists still running to end; then the latest reports (heap after GC). */
const quiet = async (live: string[]) => {
  await new Promise((r) => setTimeout(r, 3_000));
  return live.map((id) => latest.get(id)!);
};
const table = (reports: readonly Report[]) => {
  const unsharded = latest.get('unsharded');
  for (const r of reports)
    print(
      `  ${r.identity.padEnd(10)} shards ${r.owned.join(',').padEnd(14)} ${String(r.cached).padStart(6)} pods cached  heap ${r.heapMB.toFixed(1).padStart(6)} MB`,
    );
  if (unsharded)
    print(
      `  ${'unsharded'.padEnd(10)} ${'(every pod)'.padEnd(21)} ${String(unsharded.cached).padStart(6)} pods cached  heap ${unsharded.heapMB.toFixed(1).padStart(6)} MB`,
    );
};

const replicas = ['replica-a', 'replica-b', 'replica-c'];
start('unsharded', '--unsharded');
for (const identity of replicas) start(identity);
await settled(replicas);
const first = await quiet(replicas);
print(`${t()} three replicas, each caching only its shards:`);
table(first);

const victim = first[0]!.identity;
/** Lists of pods from now on (the first page of each: a request without `continue`). */
const listsFrom = api.requests.length;
const podLists = () => api.requests.slice(listsFrom).filter((r) => r.resource === 'pods' && !r.watch && !r.query['continue']).length;
const killedAt = Date.now();
children.get(victim)?.kill('SIGKILL');
if (process.env['VERBOSE']) process.stderr.write(`${killedAt} killed ${victim}\n`);
children.delete(victim);
latest.delete(victim);
print(`${t(killedAt)} killed ${victim} (SIGKILL: its Leases lapse after ${lease.duration} s)`);
const live = replicas.filter((r) => r !== victim);
const refilled = await settled(live);
const refillMs = Math.max(...refilled.map((r) => r.at)) - killedAt;
const refillLists = podLists();
print(
  `${t()} its shards ${first[0]!.owned.join(',')} are cached again elsewhere, ${(refillMs / 1000).toFixed(1)} s after the kill (${lease.bound} + a list, on this machine), after ${refillLists} lists of pods (one per survivor):`,
);
const second = await quiet(live);
table(second);
clearTimeout(deadline);
await finish(0, { pods: PODS, before: first, after: second, victim, refillMs, refillLists, unsharded: latest.get('unsharded') });
