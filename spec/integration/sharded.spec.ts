import { describe, expect, it } from 'vitest';
import { Subscription } from 'rxjs';
import { Pod, type Store } from '../../src/index.ts';
import {
  httpLeaseClients,
  shardOf as shardOfKey,
  shardedInformer,
  sharding,
  type ShardedInformer,
} from '../../src/leaderelection/index.ts';
import { startApiServer } from 'rx-informer-emulator';

const SHARDS = 6;
const PODS = 300;
/** Short Leases so the test takes seconds (the timing rules are proven at the defaults in virtual time). */
const TIMING = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 300 };

interface Replica {
  readonly identity: string;
  readonly pods: ShardedInformer<Pod>;
  store: Store<Pod> | undefined;
  owned: ReadonlySet<number>;
  readonly running: Subscription;
}

/** Polls `check` until it holds (the assertion is the condition; the deadline only ends a hung test). */
async function until(check: () => boolean, what: string, deadlineMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('sharded informers on the emulator: three replicas in one process', () => {
  it('cache disjoint sets of pods whose union is the whole set; when one leaves, its shards are cached elsewhere', async () => {
    const api = await startApiServer({ namespaces: ['demo'] });
    const replicas: Replica[] = [];
    try {
      for (let i = 0; i < PODS; i++)
        api.create('pods', { metadata: { name: `pod-${i}`, namespace: 'demo' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      const start = (identity: string): Replica => {
        const shards = sharding(httpLeaseClients(api.kubeConfig, { namespace: 'demo' }), {
          name: 'pods',
          shards: SHARDS,
          identity,
          ...TIMING,
        });
        const pods = shardedInformer(api.kubeConfig, Pod, shards, { namespace: 'demo' });
        const running = new Subscription();
        const replica: Replica = { identity, pods, store: undefined, owned: new Set(), running };
        running.add(pods.store$.subscribe((store) => (replica.store = store)));
        running.add(pods.owned$.subscribe((owned) => (replica.owned = owned)));
        return replica;
      };
      for (const identity of ['a', 'b', 'c']) replicas.push(start(identity));
      const shardOf = (key: string) => shardOfKey(key, SHARDS);

      const settled = (live: Replica[]) => {
        const owners = live.flatMap((r) => [...r.owned]);
        if (owners.length !== SHARDS || new Set(owners).size !== SHARDS) return false;
        // Balanced: everyone sees everyone (6 shards over 3 replicas: 2 each; over 2: 3 each).
        if (!live.every((r) => r.owned.size === SHARDS / live.length)) return false;
        // Each cache holds exactly its owned shards' pods.
        return (
          live.every((r) => r.store !== undefined && r.store.keys().every((key) => r.owned.has(shardOf(key)))) &&
          live.reduce((n, r) => n + (r.store?.size ?? 0), 0) === PODS
        );
      };
      await until(() => settled(replicas), 'the three replicas to split the shards');
      const keys = replicas.map((r) => new Set(r.store!.keys()));
      const union = new Set(keys.flatMap((k) => [...k]));
      expect(union.size).toBe(PODS);
      expect(keys.reduce((n, k) => n + k.size, 0)).toBe(PODS); // disjoint
      for (const r of replicas) {
        // owns() says yes exactly for the cached keys (they are of shards held and cached here).
        for (const key of r.store!.keys()) expect(r.pods.owns(key)).toBe(true);
      }

      // One replica leaves (its Leases are released); the other two take its shards in and cache their pods.
      const leaving = replicas.shift()!;
      leaving.running.unsubscribe();
      await until(() => settled(replicas), 'the two replicas left to take every shard');
      expect(replicas.reduce((n, r) => n + r.store!.size, 0)).toBe(PODS);
      expect(new Set(replicas.flatMap((r) => r.store!.keys())).size).toBe(PODS);
    } finally {
      for (const r of replicas) r.running.unsubscribe();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await api.close();
    }
  }, 60_000);
});
