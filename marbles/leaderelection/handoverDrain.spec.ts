// A shard handed over to a joining replica waits for its in-flight gate() work for `handoverDrainMs` at most (default
// the lease duration, 15 s): then that work is cancelled, as at a lost lead, and the shard released. Before, one hung
// reconcile (an HTTP call without a timeout) left every key of the shard reconciled by nobody for as long as it hung
// (review audit50). Default timing, virtual time (frames are ms).
import { finalize, NEVER, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { shardOf } from '../../src/leaderelection/hash.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { shardedInformer } from '../../src/5-informer/shardedInformer.ts';
import { ConfigMap } from '../../src/index.ts';
import type { ListWatch } from '../../src/1-transport/listWatch.ts';
import { listPage } from '../../src/testing/index.ts';

const SHARDS = 4;
const keyOf = (shard: number) => Array.from({ length: 100 }, (_, i) => `ops/apple-${i}`).find((k) => shardOf(k, SHARDS) === shard)!;

/** a from 0, b joins at 5 000 (shard 0 becomes b's); a reconcile of a shard-0 key at a from 5 500 that never ends. */
function hungHandover(handoverDrainMs?: number) {
  const ts = leakCheckingScheduler(700_000);
  const server = new FakeLeaseServer(ts);
  const make = (identity: string) =>
    sharding(server.clients({ client: identity }), {
      name: 'apples',
      shards: SHARDS,
      identity,
      scheduler: ts,
      random: () => 0,
      ...(handoverDrainMs === undefined ? {} : { handoverDrainMs }),
    });
  const a = make('a');
  const b = make('b');
  const key = keyOf(0);
  const owners = new Map<number, string>();
  let cancelledAt: number | undefined;
  ts.run(() => {
    const sa = a.held$.subscribe();
    let sb: { unsubscribe(): void } | undefined;
    ts.schedule(() => (sb = b.held$.subscribe()), 5_000);
    ts.schedule(() => a.gate(key, () => NEVER.pipe(finalize(() => (cancelledAt = ts.now())))).subscribe(), 5_500);
    for (const t of [5_900, 6_500, 20_999, 21_001, 23_001, 600_000])
      ts.schedule(() => owners.set(t, `a:${a.owns(key)} b:${b.owns(key)} lease:${server.get('apples-shard-0')?.record.holderIdentity}`), t);
    ts.schedule(() => {
      sa.unsubscribe();
      sb?.unsubscribe();
    }, 620_000);
  });
  return { owners, cancelledAt };
}

describe('a handover waits for in-flight work for handoverDrainMs at most (default timing)', () => {
  it('a hung reconcile of shard 0 is cancelled at 21 000 (a lease duration after a saw b at 6 000), and b holds shard 0 from then on', () => {
    const { owners, cancelledAt } = hungHandover();
    expect(owners.get(5_900)).toBe('a:true b:false lease:a');
    // From a's listing that sees b (6 000) shard 0 is b's by right: a takes no new key, keeps the Lease while it drains.
    expect(owners.get(6_500)).toBe('a:false b:false lease:a');
    expect(owners.get(20_999)).toBe('a:false b:false lease:a');
    expect(cancelledAt).toBe(21_000);
    // Released at 21 000 (answered in the same frame), taken by b at its next read, within a retry period.
    expect(owners.get(21_001)).toBe('a:false b:false lease:');
    expect(owners.get(23_001)).toBe('a:false b:true lease:b');
    expect(owners.get(600_000)).toBe('a:false b:true lease:b');
  });

  it('handoverDrainMs: Infinity waits as before: the shard stays with a, and nobody reconciles its keys', () => {
    const { owners, cancelledAt } = hungHandover(Number.POSITIVE_INFINITY);
    expect(owners.get(600_000)).toBe('a:false b:false lease:a');
    expect(cancelledAt).toBe(620_000); // cancelled only when a leaves the group
  });

  it('a promise cannot be unsubscribed from: gate() aborts the signal it gave the work when the drain bound passes', () => {
    const ts = leakCheckingScheduler(60_000);
    const server = new FakeLeaseServer(ts);
    const make = (identity: string) =>
      sharding(server.clients({ client: identity }), { name: 'apples', shards: SHARDS, identity, scheduler: ts, random: () => 0 });
    const a = make('a');
    const b = make('b');
    let abortedAt: number | undefined;
    ts.run(() => {
      const sa = a.held$.subscribe();
      let sb: { unsubscribe(): void } | undefined;
      ts.schedule(() => (sb = b.held$.subscribe()), 5_000);
      ts.schedule(() => {
        a.gate(keyOf(0), (signal) => {
          signal.addEventListener('abort', () => (abortedAt = ts.now()));
          return new Promise<never>(() => undefined);
        }).subscribe();
      }, 5_500);
      ts.schedule(() => {
        sa.unsubscribe();
        sb?.unsubscribe();
      }, 30_000);
    });
    expect(abortedAt).toBe(21_000);
  });
  it('a sharded informer’s gate passes that signal on: its promise work sees it aborted at 21 000 (lease104)', () => {
    const ts = leakCheckingScheduler(60_000);
    const server = new FakeLeaseServer(ts);
    const make = (identity: string) =>
      sharding(server.clients({ client: identity }), { name: 'apples', shards: SHARDS, identity, scheduler: ts, random: () => 0 });
    const a = make('a');
    const b = make('b');
    const [namespace, name] = keyOf(0).split('/') as [string, string];
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion: '1' } };
    const listWatch: ListWatch = { list: () => of(listPage('1', [object])), watch: () => NEVER };
    const apples = shardedInformer(listWatch, ConfigMap, a, { scheduler: ts, random: () => 0 });
    let abortedAt: number | undefined;
    let given: unknown;
    ts.run(() => {
      const sa = apples.store$.subscribe();
      let sb: { unsubscribe(): void } | undefined;
      ts.schedule(() => (sb = b.held$.subscribe()), 5_000);
      ts.schedule(() => {
        expect(apples.owns(keyOf(0))).toBe(true);
        apples
          .gate(keyOf(0), (signal) => {
            given = signal;
            signal?.addEventListener('abort', () => (abortedAt = ts.now()));
            return new Promise<never>(() => undefined);
          })
          .subscribe();
      }, 5_500);
      ts.schedule(() => {
        sa.unsubscribe();
        sb?.unsubscribe();
      }, 30_000);
    });
    expect(given).toBeInstanceOf(AbortSignal);
    expect(abortedAt).toBe(21_000);
  });
});
