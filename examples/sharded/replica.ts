/**
 * One replica of a sharded pod cache: `sharding()` on Leases and a `shardedInformer` that
 * keeps only the pods of the shards this replica holds. Prints a JSON line whenever what it
 * owns changes and every second: the shards owned (held and cached), the pods cached, and the
 * heap after GC (run with --expose-gc). With `--unsharded`, a plain informer of every pod
 * instead, for comparison.
 * Usage: node --expose-gc examples/sharded/replica.ts <kubeconfig> <identity> [--unsharded]
 */
import { KubeConfig } from '@kubernetes/client-node';
import { Subscription } from 'rxjs';
import { Pod, informer, shardedInformer, type Store } from '../../src/index.ts';
import { httpLeaseClients, sharding } from '../../src/leaderelection/index.ts';

const [file, identity = `replica-${process.pid}`] = process.argv.slice(2);
const unsharded = process.argv.includes('--unsharded');
const kc = new KubeConfig();
kc.loadFromFile(file ?? '');
/** Short Leases so the demo takes seconds: a dead replica's shards move within 4 s + 1 s + a list. */
const timing = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000 };
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
if (unsharded) {
  const pods = informer(kc, Pod, { http: { lazyDecode: true } });
  running.add(pods.store$.subscribe((s) => (store = s)));
} else {
  const shards = sharding(httpLeaseClients(kc, { namespace: 'demo' }), { name: 'pods', shards: SHARDS, identity, ...timing });
  const pods = shardedInformer(kc, Pod, shards);
  running.add(pods.store$.subscribe((s) => (store = s)));
  running.add(
    pods.owned$.subscribe((now) => {
      owned = [...now].sort((a, b) => a - b);
      say();
    }),
  );
  running.add(shards.errors$.subscribe(() => undefined));
}
const ticks = setInterval(say, 1_000);

process.on('SIGTERM', () => {
  clearInterval(ticks);
  running.unsubscribe(); // releases the Leases held
  setTimeout(() => process.exit(0), 300);
});
