/**
 * A request given up on an HTTP/2 connection with nothing read since it was sent (health.ts's `givenUpDecision`):
 * a PING at once, and new requests elsewhere until a frame is read. The case that matters: a leader whose Lease
 * renewals share a black-holed connection with its informers, at default timing (lease 15 s, renew deadline 10 s,
 * retry 2 s, Lease request timeout renewDeadline / 2 = 5 s) and the default PING rule (5 s + 5 s), in virtual time
 * over real sockets. Before, the renewal timed out 5 s after it was sent, its retry went onto the same connection,
 * which the PING rule closed only at the renew deadline: the leader lost its lease and took it again (a flap).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, informerFactory } from '../../src/index.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { http2Connections } from '../../src/1-transport/http2/pool.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { io, realNow } from '../support/realIo.ts';

const FAKE = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;
let api: ApiServer | undefined;
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  vi.useRealTimers();
  await api?.close();
  api = undefined;
});

async function settle(what: string, check: () => boolean, realMs = 15_000): Promise<void> {
  const deadline = realNow() + realMs;
  while (!check()) {
    if (realNow() > deadline) throw new Error(`timed out waiting for ${what}`);
    await io(5);
    await vi.advanceTimersByTimeAsync(10);
  }
}

async function advance(ms: number, step = 50): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    await vi.advanceTimersByTimeAsync(step);
    await io();
  }
}

/** Black-holes the shared connection `offsetMs` after a successful renewal; 30 s later, what the leader saw. */
async function blackHoleAfterRenewal(offsetMs: number, withInformer: boolean) {
  vi.useFakeTimers({ toFake: [...FAKE] });
  api = await startApiServer({ http2: true, namespaces: ['ops'] });
  const kc = new KubeConfig();
  kc.loadFromString(api.kubeConfig.exportConfig());
  if (withInformer) {
    const informer = informerFactory(kc).informer(ConfigMap, { namespace: 'ops' });
    const s = informer.store$.subscribe();
    stops.push(() => s.unsubscribe());
  }
  const election = leaderElection(kc, { namespace: 'ops', name: 'ctrl', identity: 'a' });
  const leader: boolean[] = [];
  const l = election.leader$.subscribe((v) => leader.push(v));
  const e = election.errors$.subscribe(() => undefined);
  stops.push(
    () => l.unsubscribe(),
    () => e.unsubscribe(),
  );
  await settle('leadership', () => leader.includes(true));
  await advance(5_000, 250);
  const renewals = () => api!.requests.filter((r) => r.resource === 'leases' && r.method === 'PUT' && r.status === 200).length;
  const before = renewals();
  await settle('a renewal', () => renewals() > before);
  await advance(offsetMs);
  const shared = http2Connections(kc);
  expect(shared).toHaveLength(1);
  expect(api.http2!.blackhole()).toBe(1);
  const renewedBefore = renewals();
  const leaderBefore = leader.length;
  await advance(30_000, 250);
  return { after: leader.slice(leaderBefore), renewed: renewals() - renewedBefore, shared: shared[0]!, kc };
}

describe('a request given up on a silent HTTP/2 connection (defaults, virtual time)', () => {
  for (const offset of [100, 1_000, 1_900])
    it(`a black hole ${offset} ms after a renewal costs no lease; the informers' connection is closed by PING`, async () => {
      const { after, renewed, shared, kc } = await blackHoleAfterRenewal(offset, true);
      expect(after).toEqual([]); // never leader=false
      expect(renewed).toBeGreaterThanOrEqual(10); // every 2 s on a new connection
      expect(shared.closed).toBe(true);
      expect(http2Connections(kc)).not.toContain(shared);
    }, 120_000);

  it('leader election alone: the retry goes to a new connection, no lease lost', async () => {
    const { after, renewed, shared } = await blackHoleAfterRenewal(1_000, false);
    expect(after).toEqual([]);
    expect(renewed).toBeGreaterThanOrEqual(10);
    // Nothing else on it: it carries no stream, so it waits (suspected, unused) for its PING answer or the idle close.
    expect(shared.usable).toBe(false);
  }, 120_000);
});
