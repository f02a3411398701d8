/**
 * One replica of a sharded pod cache: `sharding()` on Leases and a `shardedInformer` that
 * keeps only the pods of the shards this replica holds. Prints a JSON line whenever what it
 * owns changes and every second: the shards owned (held and cached), the pods cached, and the
 * heap after GC (run with --expose-gc). With `--unsharded`, a plain informer of every pod
 * instead, for comparison.
 * Usage: node --expose-gc examples/sharded/replica.ts <kubeconfig> <identity> [--unsharded]
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { Subscription, of, type Observable } from 'rxjs';
import { Pod, informer, type Store } from '../../src/index.ts';
import { httpLeaseClients, shardedInformer, sharding } from '../../src/leaderelection/index.ts';

// Unique per process: the pid is often 1 in every container.
const [file, identity = `${hostname().toLowerCase()}-${randomUUID()}`] = process.argv.slice(2);
const unsharded = process.argv.includes('--unsharded');
const kc = new KubeConfig();
kc.loadFromFile(file ?? '');
/**
 * The default Lease timing (15 s, renew deadline 10 s, retry 2 s): a dead replica's shards move
 * within 15 s + 2 × 2 s + a list. Shorter Leases are lost on a busy machine while the emulator
 * serves 30,000 pods; `--fast` (lease 4 s, renew deadline 3 s, retry 1 s) is for small runs.
 */
const timing = process.argv.includes('--fast') ? { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000 } : {};
export const SHARDS = 12;

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
let store: Store<Pod> | undefined;
let owned: readonly number[] = [];
const say = () => {
  gc();
  const heapMB = Math.round(process.memoryUsage().heapUsed / 1e5) / 10;
  process.stdout.write(`${JSON.stringify({ at: Date.now(), identity, owned, cached: store?.size ?? 0, heapMB })}\n`);
};

const running = new Subscription();
/** Completes once the Leases' releases are answered (or given up): `sharding().released$`, or at once unsharded. */
let released$: Observable<void> = of(undefined);
if (unsharded) {
  const pods = informer(kc, Pod, { http: { lazyDecode: true } });
  running.add(pods.store$.subscribe((s) => (store = s)));
} else {
  const shards = sharding(httpLeaseClients(kc, { namespace: 'demo' }), { name: 'pods', shards: SHARDS, identity, ...timing });
  // Default options: lists in pages of 500 (the emulator, like an API server with its watch cache, answers the first
  // list at resourceVersion 0 whole, and pages the others).
  released$ = shards.released$;
  const pods = shardedInformer(kc, Pod, shards);
  running.add(pods.store$.subscribe((s) => (store = s)));
  running.add(
    pods.owned$.subscribe((now) => {
      owned = [...now].sort((a, b) => a - b);
      say();
    }),
  );
  // Conflicts are expected while replicas race for Leases; other faults are worth seeing.
  running.add(
    shards.errors$.subscribe((e) =>
      e.reason === 'Conflict' ? undefined : process.stderr.write(`${identity}: Lease ${e.reason}: ${e.message}\n`),
    ),
  );
  running.add(pods.errors$.subscribe((e) => process.stderr.write(`${identity}: informer ${e.reason}: ${e.message}\n`)));
  if (process.env['VERBOSE']) {
    running.add(shards.held$.subscribe((h) => process.stderr.write(`${Date.now()} ${identity} holds ${[...h]}\n`)));
    running.add(shards.assigned$.subscribe((h) => process.stderr.write(`${Date.now()} ${identity} assigned ${[...h]}\n`)));
    running.add(pods.owned$.subscribe((h) => process.stderr.write(`${Date.now()} ${identity} owns ${[...h]}\n`)));
    running.add(
      pods.listProgress$.subscribe((p) => process.stderr.write(`${Date.now()} ${identity} list: ${p.pages} pages, ${p.objects} kept\n`)),
    );
  }
}
const ticks = setInterval(say, 1_000);

// SIGTERM (docs/replicas.md): leave the group, wait for the releases to be answered (5 × requestTimeoutMs at worst), exit.
process.once('SIGTERM', () => {
  clearInterval(ticks);
  running.unsubscribe(); // the last subscriber leaves: the shards held and the member Lease are released
  released$.subscribe({ complete: () => process.exit(0) });
});
