/**
 * `npm run example:ha [-- --json]` (node --conditions=rx-informer-source examples/ha/main.ts): starts the API-server emulator and three
 * replicas of a small controller in child processes, kills the leader
 * (SIGKILL: no release), and prints the handover. Lease 4 s, renew deadline
 * 3 s, retry 1 s: a new leader within about 5 s of the kill.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startApiServer } from 'rx-informer-emulator';
import { timing } from './timing.ts';

const json = process.argv.includes('--json');
const started = Date.now();
const t = (at: number) => `+${((at - started) / 1000).toFixed(2)}s`;
const print = (line: string) => {
  if (!json) console.log(line);
};

const api = await startApiServer({ namespaces: ['demo'] });
for (const name of ['red', 'green', 'blue']) api.create('configmaps', { metadata: { name, namespace: 'demo' }, data: { colour: name } });
const dir = mkdtempSync(join(tmpdir(), 'rx-informer-ha-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, api.kubeConfig.exportConfig());

const replicaTs = fileURLToPath(new URL('./replica.ts', import.meta.url));
const replicas = new Map<string, ChildProcess>();
/** Where each replica serves /healthz, /readyz and /metrics. */
const serving = new Map<string, string>();
const leaders: { identity: string; at: number }[] = [];
let killed: { identity: string; at: number; renewedAt: number; requests: number } | undefined;
/** The Lease as stored now: its holder and times (wall clock of the replica that wrote them: the same machine's). */
const lease = () => {
  const spec = (api.get('leases', 'demo', 'ha-demo')?.['spec'] ?? {}) as {
    holderIdentity?: string;
    acquireTime?: string;
    renewTime?: string;
  };
  return { holder: spec.holderIdentity, acquiredAt: Date.parse(spec.acquireTime ?? ''), renewedAt: Date.parse(spec.renewTime ?? '') };
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
  // The survivors drain, release the Lease and exit on SIGTERM (replica.ts, bounded there): the emulator closes once
  // they all have, rather than after a guess at how long that takes.
  await Promise.all([...replicas.values()].map(stopped));
  await api.close();
  if (json) console.log(JSON.stringify(summary));
  process.exit(code);
};
// A SIGTERM or Ctrl-C to this process alone stops the replicas too (they would run on, orphaned, until their timers).
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void finish(signal === 'SIGINT' ? 130 : 143, { error: `stopped by ${signal}` }));

for (const identity of ['replica-a', 'replica-b', 'replica-c']) {
  const child = spawn(process.execPath, [replicaTs, kubeconfig, identity], { stdio: ['ignore', 'pipe', 'inherit'] });
  replicas.set(identity, child);
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let event: {
      at: number;
      identity: string;
      leader?: boolean;
      reconciled?: string;
      error?: string;
      serving?: string;
      failed?: string;
      cause?: string;
    };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return;
    }
    if (event.serving) {
      serving.set(event.identity, event.serving);
      print(`${t(event.at)} ${event.identity} serves /healthz, /readyz, /metrics at ${event.serving}`);
    } else if (event.leader === true) {
      leaders.push({ identity: event.identity, at: event.at });
      print(`${t(event.at)} ${event.identity} is leader`);
      if (!killed) {
        // Let it lead (and reconcile) for a moment, then kill it without warning.
        setTimeout(() => {
          // The last renewal stored before the kill (one in flight may still land: later, never earlier).
          killed = { identity: event.identity, at: Date.now(), renewedAt: lease().renewedAt, requests: api.requests.length };
          replicas.get(event.identity)?.kill('SIGKILL');
          print(`${t(killed.at)} killed ${event.identity} (SIGKILL, no release)`);
        }, 1_000);
      } else if (event.identity !== killed.identity) {
        const handoverMs = event.at - killed.at;
        const now = lease();
        // Measures of the handover that do not depend on the machine's speed: the Lease was taken only once it had
        // lapsed (acquiredAt − the last renewal ≥ leaseDuration), and the survivors' reads of it from the kill to the
        // write that took it (the first one written after a read: a renewal of the dead leader's still in flight needs none).
        const sinceKill = api.requests.slice(killed.requests).filter((r) => r.resource === 'leases' && !r.watch);
        let leaseReads = 0;
        for (const r of sinceKill) {
          if (r.method === 'GET') leaseReads++;
          else if (leaseReads > 0 && r.status >= 200 && r.status < 300) break;
        }
        const handover = { holder: now.holder, lapsedMs: now.acquiredAt - killed.renewedAt, leaseReads };
        print(
          `handover: ${event.identity} took over ${(handoverMs / 1000).toFixed(2)} s after ${killed.identity} died (lease 4 s + retry 1 s = 5 s bound, plus request time)`,
        );
        const url = serving.get(event.identity);
        const probe = url
          ? fetch(`${url}/readyz`).then(
              (r) => r.status,
              () => 0,
            )
          : Promise.resolve(0);
        void probe.then((readyz) => {
          print(`${event.identity} /readyz: ${readyz}`);
          void finish(0, { killed: killed!.identity, next: event.identity, handoverMs, handover, timing, leaders, readyz });
        });
      }
    } else if (event.leader === false && leaders.some((l) => l.identity === event.identity))
      print(`${t(event.at)} ${event.identity} stepped down`);
    else if (event.reconciled) print(`${t(event.at)} ${event.identity} reconciled ${event.reconciled}`);
    else if (event.error) print(`${t(event.at)} ${event.identity} lease error: ${event.error}`);
    else if (event.failed) print(`${t(event.at)} ${event.identity} reconcile of ${event.failed} failed: ${event.cause}`);
  });
}

setTimeout(() => void finish(1, { error: 'no handover within 30 s', leaders }), 30_000);
