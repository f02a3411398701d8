/**
 * The PING rule at its defaults (read-idle 5 s, ping timeout 5 s), in
 * virtual time: on its own with a fake session, and end to end with the
 * emulator black-holing the HTTP/2 connection of ten informers (vi fake timers
 * drive the client's and the emulator's timers alike; sockets stay real).
 * The rule itself, {@link pingDecision}, is tabled in pingDecision.spec.ts.
 */
import type { ClientHttp2Session } from 'node:http2';
import { firstValueFrom, VirtualTimeScheduler, VirtualAction, type SchedulerLike } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, informerFactory, type InformerError } from '../../src/index.ts';
import { DEFAULT_PING_TIMEOUT_MS, DEFAULT_READ_IDLE_MS, MAX_LATE_PINGS, PingHealth } from '../../src/1-transport/http2/health.ts';
import { http2Connections } from '../../src/1-transport/http2/pool.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { io, realNow, waitReal } from '../support/realIo.ts';
import { leakCheckingScheduler } from '../../marbles/support/leakCheckingScheduler.ts';

/** A session whose PINGs are answered (`answer`) or not. */
function fakeSession() {
  const pings: ((error: Error | null, duration: number, payload: Buffer) => void)[] = [];
  const session = { ping: (callback: (error: Error | null, duration: number, payload: Buffer) => void) => (pings.push(callback), true) };
  return {
    session: session as unknown as ClientHttp2Session,
    pings,
    answer: () => pings.splice(0).forEach((cb) => cb(null, 1, Buffer.alloc(8))),
  };
}

/** A scheduler on `inner`'s clock whose every timer fires `lateMs` after it was due (a loop late every time). */
const lateBy = (inner: VirtualTimeScheduler, lateMs: number) =>
  ({ now: () => inner.now(), schedule: (work: () => void, delay = 0) => inner.schedule(work, delay + lateMs) }) as unknown as SchedulerLike;

/** A virtual-time scheduler that stops at `until` ms. */
const virtual = (until: number) => new VirtualTimeScheduler(VirtualAction, until);

describe('PingHealth at its defaults', () => {
  it('defaults find a dead connection within 10 s', () => {
    expect(DEFAULT_READ_IDLE_MS + DEFAULT_PING_TIMEOUT_MS).toBeLessThanOrEqual(10_000);
  });

  it('a connection that answers nothing is declared dead 10 s after its last frame (ping at 5 s)', () => {
    const scheduler = virtual(60_000);
    const { session, pings } = fakeSession();
    let deadAt: number | undefined;
    const health = new PingHealth(session, { scheduler }, () => (deadAt = scheduler.now()));
    health.streams(1);
    scheduler.maxFrames = 4_999;
    scheduler.flush();
    expect(pings).toHaveLength(0);
    scheduler.maxFrames = 5_000;
    scheduler.flush();
    expect(pings).toHaveLength(1);
    scheduler.maxFrames = 60_000;
    scheduler.flush();
    expect(deadAt).toBe(10_000);
    expect(health.timers).toBe(0);
  });

  it("given no scheduler, inside rxjs's TestScheduler.run(): the PING at 5 s and the verdict at 10 s, in virtual time", () => {
    // The default's clock read the real monotonic one while run() made its timers virtual: the idle timer fired at 5 s
    // virtual, found (by the real clock) nothing idle, and waited again, for as long as the test ran in real time.
    const scheduler = leakCheckingScheduler(60_000);
    const seen: string[] = [];
    const session = { ping: () => (seen.push(`ping ${scheduler.now()}`), true) } as unknown as ClientHttp2Session;
    scheduler.run(() => {
      new PingHealth(session, {}, () => seen.push(`dead ${scheduler.now()}`)).streams(1);
    });
    expect(seen).toEqual(['ping 5000', 'dead 10000']);
  });

  it('a loop late on every timer still finds a silent connection dead, after MAX_LATE_PINGS fresh PINGs', () => {
    const inner = virtual(120_000);
    const late = lateBy(inner, 2_000);
    const { session, pings } = fakeSession();
    let deadAt: number | undefined;
    const health = new PingHealth(session, { scheduler: late }, () => (deadAt = inner.now()));
    health.streams(1);
    inner.flush();
    expect(pings).toHaveLength(1 + MAX_LATE_PINGS);
    // idle 5 s (+2 late), then 1 + MAX_LATE_PINGS timeouts of 5 s (+2 late each).
    expect(deadAt).toBe(7_000 + (1 + MAX_LATE_PINGS) * 7_000);
    expect(health.timers).toBe(0);
  });

  it('the same late loop on a connection that answers: never dead', () => {
    const inner = virtual(120_000);
    const late = lateBy(inner, 2_000);
    const { session, pings, answer } = fakeSession();
    let dead = false;
    const health = new PingHealth(session, { scheduler: late }, () => (dead = true));
    health.streams(1);
    // The answer is read right after each late timer (I/O follows timers in a turn of the loop).
    inner.schedule(function poll(this: { schedule(state?: undefined, delay?: number): void }) {
      answer();
      this.schedule(undefined, 500);
    }, 500);
    inner.flush();
    expect(dead).toBe(false);
    expect(pings.length).toBe(0);
    health.stop();
  });

  it('a healthy idle connection costs one PING per 5 s of silence, and frames read postpone it', () => {
    const scheduler = virtual(60_000);
    const { session, pings, answer } = fakeSession();
    let dead = false;
    const health = new PingHealth(session, { scheduler }, () => (dead = true));
    health.streams(1);
    let sent = 0;
    // Answer every PING 1 s after it is sent, for a minute.
    for (let t = 0; t < 60_000; t += 1_000) {
      scheduler.maxFrames = t;
      scheduler.flush();
      sent += pings.length;
      answer();
    }
    expect(dead).toBe(false);
    expect(sent).toBeGreaterThanOrEqual(9);
    expect(sent).toBeLessThanOrEqual(12);
  });

  it('reads keep it from pinging at all; no stream, no timer', () => {
    const scheduler = virtual(60_000);
    const { session, pings } = fakeSession();
    const health = new PingHealth(session, { scheduler }, () => undefined);
    health.streams(1);
    for (let t = 2_500; t <= 30_000; t += 2_500) scheduler.schedule(() => health.read(), t);
    scheduler.maxFrames = 30_000;
    scheduler.flush();
    expect(pings).toHaveLength(0);
    health.streams(-1);
    expect(health.timers).toBe(0);
  });

  it('a request on a connection idle for longer than read-idle pings at once', () => {
    const scheduler = virtual(60_000);
    const { session, pings } = fakeSession();
    const health = new PingHealth(session, { scheduler }, () => undefined);
    scheduler.maxFrames = 30_000;
    scheduler.schedule(() => health.streams(1), 30_000);
    scheduler.flush();
    expect(pings).toHaveLength(1);
  });
});

describe("PingHealth's durations past Node's timer limit (2^31−1 ms, about 24.8 days)", () => {
  const DAY = 86_400_000;
  afterEach(() => vi.useRealTimers());

  // Node (and vi's fake timers, as Node) runs a longer timer after 1 ms: readIdleMs of 30 days pinged every
  // millisecond, and pingTimeoutMs of 30 days declared every connection dead 1 ms after its first PING.
  it('readIdleMs of 30 days neither loops nor throws: no PING in an hour, one timer pending', () => {
    vi.useFakeTimers();
    const { session, pings } = fakeSession();
    const health = new PingHealth(session, { readIdleMs: 30 * DAY }, () => undefined);
    expect(() => health.streams(1)).not.toThrow();
    vi.advanceTimersByTime(3_600_000);
    expect(pings).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(1);
    health.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('pingTimeoutMs of 30 days: the PING at the default 5 s, and no verdict within an hour', () => {
    vi.useFakeTimers();
    const { session, pings } = fakeSession();
    let dead = false;
    const health = new PingHealth(session, { pingTimeoutMs: 30 * DAY }, () => (dead = true));
    health.streams(1);
    vi.advanceTimersByTime(3_600_000);
    expect([pings.length, dead, health.pinging]).toEqual([1, false, true]);
    health.stop();
  });

  it('pingTimeoutMs Infinity (or 0) is no timeout: an unanswered PING leaves the connection be, no timer', () => {
    vi.useFakeTimers();
    for (const pingTimeoutMs of [Infinity, 0]) {
      const { session, pings, answer } = fakeSession();
      let dead = false;
      const health = new PingHealth(session, { pingTimeoutMs }, () => (dead = true));
      health.streams(1);
      vi.advanceTimersByTime(3_600_000);
      expect([pings.length, dead, vi.getTimerCount()]).toEqual([1, false, 0]);
      answer(); // an answer at last: the idle rule goes on
      vi.advanceTimersByTime(DEFAULT_READ_IDLE_MS);
      expect(pings).toHaveLength(1);
      health.stop();
    }
  });
});

const NAMESPACES = Array.from({ length: 10 }, (_, i) => `ns${i}`);
let api: ApiServer | undefined;
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  vi.useRealTimers();
  await api?.close();
  api = undefined;
});

/** The timers vi fakes: the PING timers run on setInterval (rxjs) and read the monotonic clock (performance). */
const FAKE = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;
/** Waits for `check`, moving virtual time 10 ms per round of real I/O; fails after `realMs` of real time. */
async function settle(what: string, check: () => boolean | Promise<boolean>, realMs = 15_000): Promise<void> {
  const deadline = realNow() + realMs;
  while (!(await check())) {
    if (realNow() > deadline) throw new Error(`timed out waiting for ${what}`);
    await io(5);
    await vi.advanceTimersByTimeAsync(10);
  }
}

/**
 * Fakes the timers, starts the emulator over HTTP/2 and one informer per namespace on one factory (store$ and
 * errors$ subscribed until the test ends). `before` runs once the server is up, before any informer subscribes.
 */
async function tenInformers(before?: (api: ApiServer) => void) {
  vi.useFakeTimers({ toFake: [...FAKE] });
  api = await startApiServer({ http2: true, namespaces: NAMESPACES });
  before?.(api);
  const kc = new KubeConfig();
  kc.loadFromString(api.kubeConfig.exportConfig());
  const factory = informerFactory(kc);
  const errors: InformerError[] = [];
  const informers = NAMESPACES.map((namespace) => factory.informer(ConfigMap, { namespace }));
  for (const i of informers) {
    const e = i.errors$.subscribe((error) => errors.push(error));
    const s = i.store$.subscribe();
    stops.push(
      () => e.unsubscribe(),
      () => s.unsubscribe(),
    );
  }
  return { api, kc, informers, errors };
}

describe('a black-holed HTTP/2 connection', () => {
  it('is found by PING within 10 s of its last frame at the defaults, and all ten informers converge on a new connection', async () => {
    const { api, kc, informers, errors } = await tenInformers();
    const converged = async () => {
      for (const [n, i] of informers.entries()) {
        const names = (await firstValueFrom(i.store$))
          .list()
          .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
          .sort();
        const want = api!
          .list('configmaps', NAMESPACES[n])
          .map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`)
          .sort();
        if (JSON.stringify(names) !== JSON.stringify(want)) return false;
      }
      return true;
    };
    await settle('ten watches', () => api!.activeWatches === 10);
    expect(api.acceptedConnections).toBe(1);
    const [first] = http2Connections(kc);
    // Every watch delivered an event: its response headers were read before the black hole.
    for (const ns of NAMESPACES) api.create('configmaps', { metadata: { name: 'before-dark', namespace: ns } });
    await settle('every informer to see its event', converged);
    // When its session closed (virtual time).
    const health = first!.health!;
    let deadAt: number | undefined;
    first!.session!.once('close', () => (deadAt = Date.now()));
    // No PING in flight: the last frame the server sent is no later than the black hole (and a PING sent before
    // it, answered or not, would make the last frame an earlier one or time out earlier).
    await waitReal('no PING in flight', () => !health.pinging);
    expect(api.http2!.blackhole()).toBe(1);
    const darkAt = Date.now(); // the last frame came no later
    for (const ns of NAMESPACES) api.create('configmaps', { metadata: { name: 'while-dark', namespace: ns } });
    // 250 ms by 250 ms of virtual time, with real I/O in between: the connection is declared dead by PING.
    for (let step = 1; step <= 100 && deadAt === undefined; step++) {
      await vi.advanceTimersByTimeAsync(250);
      await io();
    }
    expect(deadAt, 'never declared dead').toBeDefined();
    expect(first!.closed).toBe(true);
    expect(deadAt! - darkAt).toBeGreaterThanOrEqual(DEFAULT_PING_TIMEOUT_MS);
    expect(deadAt! - darkAt).toBeLessThanOrEqual(10_000);

    await settle('every informer to converge on a new connection', converged);
    expect(api.acceptedConnections).toBe(2);
    expect(api.http2!.sessions).toBe(2);
    const network = errors.filter((e) => e.reason === 'NetworkError');
    expect(network.length).toBeGreaterThanOrEqual(10);
    // Each names its cause, the PING unanswered (audit22: it said only "closed mid-stream").
    const messages = network.map((e) => `${e.phase}: ${e.message}`);
    expect(messages.filter((m) => !/^watch: .*answered no PING within 5000 ms/.test(m))).toEqual([]);
    // Each watch resumed from its last resourceVersion: no relist after the first ten lists.
    expect(api.requests.filter((r) => !r.watch && r.path.includes('configmaps')).length).toBe(10);
  }, 60_000);

  it('a healthy quiet connection, even with one watch stalled, costs PINGs only: no request, no reconnect', async () => {
    // The first watch stalls after one event, on a connection that stays healthy.
    const { api, kc, errors } = await tenInformers((server) =>
      server.faults.add({ match: { watch: true, namespace: 'ns0' }, fault: { type: 'stallWatch', afterEvents: 1 }, times: 1 }),
    );
    await settle('ten watches', () => api!.activeWatches === 10);
    api.create('configmaps', { metadata: { name: 'one', namespace: 'ns0' } });
    await settle('the stalled watch to deliver its one event', () => api!.requests.some((r) => r.watch && r.eventsSent === 1));
    const requests = api.requests.length;
    const [connection] = http2Connections(kc);
    const pings = api.http2!.pings;
    // 50 s of virtual time (less than the reflector's 60 s idle rule), second by second. Virtual time waits
    // for a PING's answer to come back over the (real) loopback before it moves on.
    for (let s = 0; s < 50; s++) {
      await vi.advanceTimersByTimeAsync(1_000);
      await io();
      await waitReal('the PING answer', () => !connection!.health!.pinging);
    }
    expect(connection!.closed).toBe(false);
    expect(api.acceptedConnections).toBe(1);
    expect(api.requests.length).toBe(requests);
    expect(errors).toEqual([]);
    // One PING per 5 s of quiet.
    expect(api.http2!.pings - pings).toBeGreaterThanOrEqual(8);
    expect(api.http2!.pings - pings).toBeLessThanOrEqual(10);
  }, 60_000);
});

describe('an event loop blocked for 15 s', () => {
  it('on a healthy connection with a PING in flight: the late PING timeout sends a fresh PING, no reconnect', async () => {
    const { api, kc, errors } = await tenInformers();
    await settle('ten watches', () => api!.activeWatches === 10);
    const requests = api.requests.length;
    const [connection] = http2Connections(kc);
    const pings = api.http2!.pings;
    // Read-idle passes with no I/O in between: the PING goes out, its answer is not read yet.
    vi.advanceTimersByTime(DEFAULT_READ_IDLE_MS);
    expect(connection!.health!.pinging).toBe(true);
    // The loop is blocked for 15 s: the clock jumps at once, then the due timers run (late), before any I/O.
    (Date as unknown as { clock: { jump(ms: number): void } }).clock.jump(15_000);
    expect(connection!.closed).toBe(false);
    // The loop runs again: the answers are read; then 20 s of quiet, second by second.
    await io();
    await waitReal('the PING answer', () => !connection!.health!.pinging);
    for (let s = 0; s < 20; s++) {
      await vi.advanceTimersByTimeAsync(1_000);
      await io();
      await waitReal('the PING answer', () => !connection!.health!.pinging);
    }
    expect(connection!.closed).toBe(false);
    expect(api.acceptedConnections).toBe(1);
    expect(api.requests.length).toBe(requests);
    expect(errors).toEqual([]);
    expect(api.http2!.pings - pings).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe('a watch stalled on a healthy HTTP/2 connection (PINGs answered, the stream silent)', () => {
  it('during churn (a write every 500 ms) is resumed within 20 s of its last event by the adaptive idle rule, on the same connection', async () => {
    vi.useFakeTimers({ toFake: [...FAKE] });
    api = await startApiServer({ http2: true, namespaces: ['ns0'] });
    const kc = new KubeConfig();
    kc.loadFromString(api.kubeConfig.exportConfig());
    const informer = informerFactory(kc).informer(ConfigMap, { namespace: 'ns0' });
    const errors: InformerError[] = [];
    const e = informer.errors$.subscribe((error) => errors.push(error));
    const s = informer.store$.subscribe();
    stops.push(
      () => e.unsubscribe(),
      () => s.unsubscribe(),
    );
    // The first watch stalls after 20 events; the connection stays healthy.
    api.faults.add({ match: { watch: true, namespace: 'ns0' }, fault: { type: 'stallWatch', afterEvents: 20 }, times: 1 });
    await settle('the watch', () => api!.activeWatches === 1);
    const [connection] = http2Connections(kc);
    const watches = () => api!.requests.filter((r) => r.watch);
    const rvs: string[] = [];
    let lastEventAt: number | undefined;
    let resumedAt: number | undefined;
    // 40 writes 500 ms apart (20 s of churn), then up to 40 s more, in 500 ms steps of virtual time.
    for (let step = 0; step < 120 && resumedAt === undefined; step++) {
      if (step < 40) rvs.push(api.create('configmaps', { metadata: { name: `cm${step}`, namespace: 'ns0' } }).metadata!.resourceVersion!);
      await io();
      await waitReal('the event to be written', () => step >= 40 || (watches()[0]!.eventsSent ?? 0) >= Math.min(step + 1, 20));
      if (lastEventAt === undefined && watches()[0]!.eventsSent === 20) lastEventAt = Date.now();
      if (watches().length > 1) resumedAt = Date.now();
      await vi.advanceTimersByTimeAsync(500);
      await waitReal('the PING answer', () => !connection!.health?.pinging);
    }
    expect(lastEventAt).toBeDefined();
    expect(resumedAt, `no resume; requests: ${JSON.stringify(watches())}`).toBeDefined();
    expect(resumedAt! - lastEventAt!).toBeGreaterThanOrEqual(14_500);
    expect(resumedAt! - lastEventAt!).toBeLessThanOrEqual(20_000);
    expect(watches()[0]).toMatchObject({ fault: 'stallWatch', ended: 'client' });
    expect(watches()[1]!.query.resourceVersion).toBe(rvs[19]); // from the stalled watch's last event: a resume
    await settle('the store to converge', async () => (await firstValueFrom(informer.store$)).list().length === 40);
    expect(connection!.closed).toBe(false);
    expect(api.acceptedConnections).toBe(1);
    expect(api.requests.filter((r) => !r.watch && r.path.includes('configmaps'))).toHaveLength(1); // no relist
    expect(errors).toEqual([]);
  }, 60_000);
});
