/**
 * A control-plane restart, in virtual time, at default options: 50 informers of one KubeConfig watch the
 * emulator over HTTP/1.1; the emulator goes down for 20 s (its port refuses connections, every open watch is
 * dropped; etcd, its objects and history, survives), objects are written meanwhile, then it comes back.
 * Every informer must hold the writes made during the outage within 5 s of the server's return: the transport's
 * one probe of the server (`GET /version`, 500 ms doubling to 2 s, jittered) ends the waits of all of them at
 * once, instead of each waiting out its own grown backoff (client-go's 800 ms doubling to 30 s).
 *
 * vi fakes the timers (the informers', the probe's, the emulator's) and the clocks; sockets stay real. Virtual
 * time moves 50 ms at a time, and only once no HTTP request of this process is awaiting its answer (the
 * diagnostics channels count them), so the times measured are the schedule's, not the machine's.
 */
import dc from 'node:diagnostics_channel';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, informerFactory, type InformerError } from '../../src/index.ts';
import { DEFAULT_PROBE_INITIAL_MS, DEFAULT_PROBE_MAX_MS } from '../../src/1-transport/reachability.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

const INFORMERS = 50;
const OUTAGE_MS = 20_000;
const NAMESPACES = Array.from({ length: INFORMERS }, (_, i) => `ns${i}`);
/** The timers vi fakes: rxjs's asyncScheduler runs on setInterval; the clocks are Date and performance. */
const FAKE = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;
const realNow = performance.now.bind(performance);

/** What this process's HTTP clients do: connections dialled, requests started, answered or failed. */
class Traffic {
  dials = 0;
  started = 0;
  ended = 0;
  private readonly subscriptions: [string, (message: unknown) => void][] = [
    ['net.client.socket', () => this.dials++],
    ['http.client.request.start', () => this.started++],
    ['http.client.response.finish', () => this.ended++],
    ['http.client.request.error', () => this.ended++],
  ];

  constructor() {
    for (const [name, listener] of this.subscriptions) dc.subscribe(name, listener);
  }

  get pending(): number {
    return this.started - this.ended;
  }

  stop(): void {
    for (const [name, listener] of this.subscriptions) dc.unsubscribe(name, listener);
  }
}

let api: ApiServer | undefined;
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  vi.useRealTimers();
  await api?.close();
  api = undefined;
});

/** Lets real I/O run (setImmediate is not faked) without moving virtual time. */
async function io(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits, virtual time standing still, until no request is awaiting its answer; fails after 20 s of real time. */
async function quiet(traffic: Traffic): Promise<void> {
  const deadline = realNow() + 20_000;
  do {
    await io();
    if (realNow() > deadline) throw new Error(`${traffic.pending} requests still unanswered`);
  } while (traffic.pending > 0);
  await io();
}

/** Moves virtual time `ms` ahead, 50 ms at a time, each step once the requests it started are answered. */
async function advance(traffic: Traffic, ms: number, each: () => boolean | void = () => undefined): Promise<void> {
  for (let moved = 0; moved < ms; moved += 50) {
    await vi.advanceTimersByTimeAsync(50);
    await quiet(traffic);
    if (each() === true) return;
  }
}

describe('a control-plane restart (down 20 s), 50 informers, default options', () => {
  it('every informer holds what was written during the outage within 5 s of the server coming back; dials while down are bounded', async () => {
    vi.useFakeTimers({ toFake: [...FAKE] });
    api = await startApiServer({ namespaces: NAMESPACES, keepAliveTimeoutMs: 600_000 });
    const traffic = new Traffic();
    stops.push(() => traffic.stop());
    const kc = new KubeConfig();
    kc.loadFromString(api.kubeConfig.exportConfig());
    const factory = informerFactory(kc);
    const errors: InformerError[] = [];
    const informers = NAMESPACES.map((namespace) => factory.informer(ConfigMap, { namespace }));
    const seen = new Map<string, string[]>();
    for (const [n, informer] of informers.entries()) {
      const e = informer.errors$.subscribe((error) => errors.push(error));
      const s = informer.store$.subscribe((store) =>
        seen.set(
          NAMESPACES[n]!,
          store.list().map((o) => o.metadata.name ?? ''),
        ),
      );
      stops.push(
        () => e.unsubscribe(),
        () => s.unsubscribe(),
      );
    }
    for (const namespace of NAMESPACES) api.create('configmaps', { metadata: { name: 'before', namespace } });
    await advance(traffic, 5_000, () => api!.activeWatches === INFORMERS && NAMESPACES.every((ns) => seen.get(ns)?.includes('before')));
    expect(api.activeWatches).toBe(INFORMERS);

    // Down: every watch is dropped, every connection refused; writes go on (etcd is up).
    const dialsBefore = traffic.dials;
    await api.down();
    const downAt = Date.now();
    for (const namespace of NAMESPACES) api.create('configmaps', { metadata: { name: 'during', namespace } });
    await advance(traffic, OUTAGE_MS);
    const dialsWhileDown = traffic.dials - dialsBefore;
    await api.up();
    const upAt = Date.now();
    expect(upAt - downAt).toBe(OUTAGE_MS);

    // Back: when each informer holds the write made during the outage.
    const converged = new Map<string, number>();
    const check = () => {
      for (const ns of NAMESPACES) if (!converged.has(ns) && seen.get(ns)?.includes('during')) converged.set(ns, Date.now() - upAt);
      return converged.size === INFORMERS;
    };
    await advance(traffic, 60_000, check);
    const late = NAMESPACES.filter((ns) => (converged.get(ns) ?? Infinity) > 5_000);
    expect(late, `converged after (ms): ${JSON.stringify(Object.fromEntries(converged))}`).toEqual([]);
    // The probe waits at most 2 × maxMs (4 s) between probes, and all informers resume on its first answer.
    expect(Math.max(...converged.values())).toBeLessThanOrEqual(2 * DEFAULT_PROBE_MAX_MS);

    // Dials while down: each informer's own retries keep client-go's backoff (a dial at once, or after the first
    // wait, after the drop, then waits of at least 0.8, 1.6, 3.2, 6.4, 12.8 s: at most 5 dials in 20 s), and the
    // one probe of the server waits at least 0.5, 1, 2, 2, … s (at most 11 probes in 20 s): ≤ 50 × 5 + 11 = 261.
    const atMost = (first: number, max: number) => {
      let n = 0;
      for (let t = 0, wait = first; t <= OUTAGE_MS; t += wait, wait = Math.min(2 * wait, max)) n++;
      return n;
    };
    const ownDials = atMost(800, 30_000);
    const probes = atMost(DEFAULT_PROBE_INITIAL_MS, DEFAULT_PROBE_MAX_MS) - 1; // none at once: the first after a wait
    expect([ownDials, probes]).toEqual([5, 11]);
    expect(dialsWhileDown).toBeGreaterThan(INFORMERS); // each informer tried on its own at least once
    expect(dialsWhileDown).toBeLessThanOrEqual(INFORMERS * ownDials + probes);
    const probesSent = api.requests.filter((r) => r.path === '/version').length;
    expect(probesSent, 'probes answered after the return').toBeGreaterThanOrEqual(1);

    // What the informers reported: the dropped watches, and connections refused (unreachable).
    expect(errors.some((e) => e.reason === 'NetworkError' && e.unreachable)).toBe(true);
    // Each resumed its watch from its resourceVersion: no relist after the first lists.
    expect(api.requests.filter((r) => !r.watch && r.path.includes('/configmaps')).length).toBe(INFORMERS);
  }, 120_000);
});
