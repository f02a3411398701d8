/**
 * How a watch recovers, through the emulator: stalls, very short watches,
 * clean ends, server and network errors, 429, and leaving.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import { ConfigMap, informer } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from './harness/live.ts';
import { ServerRequestTracker, sleep } from './harness/probes.ts';

let api: ApiServer | undefined;
let live: Running<ConfigMap> | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

const rvOf = (o: { metadata?: { resourceVersion?: string } }) => o.metadata?.resourceVersion;

describe('stall detection', () => {
  it('a watch silent for its timeout plus the margin is aborted, reported as Timeout, and resumed from the last resourceVersion', async () => {
    api = await startApiServer({ bookmarkIntervalMs: 5000 });
    api.create('configmaps', cm('a'));
    // The first watch delivers one event, then goes silent without closing.
    api.faults.add({ match: { watch: true }, fault: { type: 'stallWatch', afterEvents: 1 } });
    live = run(api, ConfigMap, { minWatchTimeoutSeconds: 0.2, stallMarginMs: 100, backoff: { initialMs: 10, maxMs: 20 } });
    await waitFor('the initial list', live.synced);
    const b = api.create('configmaps', cm('b'));
    await waitFor('b through the watch', () => live!.store()?.has('default/b') === true);
    const c = api.create('configmaps', cm('c')); // the stalled watch will not bring it
    await waitFor('c, after the stall is detected', () => live!.store()?.get('default/c')?.metadata.resourceVersion === rvOf(c), 3000);

    const [stalled, resumed] = live.watches();
    expect(stalled).toMatchObject({ fault: 'stallWatch', ended: 'client', eventsSent: 1 });
    expect(resumed?.query['resourceVersion']).toBe(rvOf(b));
    const timeoutMs = Number(stalled!.query['timeoutSeconds']) * 1000;
    expect(timeoutMs).toBeGreaterThanOrEqual(200);
    expect(timeoutMs).toBeLessThan(400);
    // Aborted no sooner than the timeout plus the margin after the last frame, and not much later.
    const gap = resumed!.at - stalled!.at;
    expect(gap).toBeGreaterThanOrEqual(timeoutMs + 100 - 5);
    expect(gap).toBeLessThan(timeoutMs + 100 + 400);
    expect(live.errors.map((e) => [e.reason, e.phase])).toEqual([['Timeout', 'watch']]);
    expect(live.lists()).toHaveLength(1); // resumed, not relisted
    await converged(api, live, 'configmaps');
  });
});

describe('very short watches', () => {
  it('a watch the server ends at once with no event counts as a failure: backoff, no reconnect storm', async () => {
    api = await startApiServer();
    api.faults.add({ match: { watch: true }, times: Infinity, fault: { type: 'closeWatch' } });
    // No jitter: waits of 20, 40, 80, 160, 160 … ms.
    live = run(api, ConfigMap, { backoff: { initialMs: 20, maxMs: 160 }, random: () => 0 });
    await sleep(1000);
    const watches = live.watches();
    // Immediate re-watching would make hundreds in a second.
    expect(watches.length).toBeGreaterThanOrEqual(4);
    expect(watches.length).toBeLessThanOrEqual(10);
    const gaps = watches.slice(1).map((w, i) => w.at - watches[i]!.at);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(Math.min(20 * 2 ** i, 160) - 2));
    expect(live.errors.every((e) => e.reason === 'VeryShortWatch')).toBe(true);
    expect(live.errors.length).toBeGreaterThanOrEqual(watches.length - 1);
    expect(live.lists()).toHaveLength(1); // the resourceVersion is still good: re-watch, no relist
    expect(new Set(watches.map((w) => w.query['resourceVersion']))).toEqual(new Set([api.resourceVersion]));
  });

  it('a short watch that the server ends on time (its own short timeoutSeconds) is not a failure', async () => {
    api = await startApiServer();
    live = run(api, ConfigMap, { minWatchTimeoutSeconds: 0.1, backoff: { initialMs: 500, maxMs: 500 } });
    await sleep(700);
    expect(live.watches().length).toBeGreaterThanOrEqual(4); // each timed out after 0.1–0.2 s and was resumed at once
    expect(live.watches().every((w) => w.ended === 'timeout' || w.ended === undefined)).toBe(true);
    expect(live.errors).toEqual([]);
  });
});

describe('a clean end', () => {
  it('after real work resumes at once from the last resourceVersion, with no error', async () => {
    api = await startApiServer();
    api.faults.add({ match: { watch: true }, fault: { type: 'closeWatch', afterEvents: 2 } });
    live = run(api, ConfigMap, { backoff: { initialMs: 1000, maxMs: 1000 } });
    await waitFor('the initial list', live.synced);
    // The first watch is sent after the list is handed on: wait for it, or `next` below would take it.
    await waitFor('the first watch', () => live!.watches().length === 1);
    api.create('configmaps', cm('x'));
    const next = api.nextRequest((r) => r.watch, 900);
    const t0 = performance.now();
    const y = api.create('configmaps', cm('y')); // the second event: the server ends the watch cleanly
    const resumed = await next;
    expect(performance.now() - t0).toBeLessThan(300); // the backoff would be 1 s
    expect(resumed.query['resourceVersion']).toBe(rvOf(y));
    expect(live.watches()[0]).toMatchObject({ fault: 'closeWatch', ended: 'fault', eventsSent: 2 });
    await converged(api, live, 'configmaps');
    expect(live.errors).toEqual([]);
  });
});

describe('server and network errors on a watch', () => {
  it('a dropped connection, 503 and a reset connection back off and resume the watch from the last resourceVersion (no relist)', async () => {
    api = await startApiServer();
    api.faults.schedule({ watch: true }, [{ type: 'dropWatch', afterEvents: 1 }, { type: 'status', code: 503 }, { type: 'reset' }]);
    live = run(api, ConfigMap, { backoff: { initialMs: 10, maxMs: 40 } });
    await waitFor('the initial list', live.synced);
    const a = api.create('configmaps', cm('a'));
    await waitFor('four watches', () => live!.watches().length === 4);
    api.create('configmaps', cm('b'));
    await converged(api, live, 'configmaps');
    expect(live.errors.map((e) => [e.reason, e.phase])).toEqual([
      ['NetworkError', 'watch'],
      ['ServerError', 'watch'],
      ['NetworkError', 'watch'],
    ]);
    expect(live.errors[1]?.status).toBe(503);
    expect(live.lists()).toHaveLength(1);
    expect(
      live
        .watches()
        .slice(1)
        .map((w) => w.query['resourceVersion']),
    ).toEqual([rvOf(a), rvOf(a), rvOf(a)]);
  });

  it('429 waits for Retry-After even when the backoff is shorter, and says so on errors$', async () => {
    api = await startApiServer();
    api.faults.add({ match: { watch: true }, fault: { type: 'status', code: 429, retryAfterSeconds: 1 } });
    live = run(api, ConfigMap, { backoff: { initialMs: 10, maxMs: 20 } });
    await waitFor('a second watch', () => live!.watches().length === 2, 3000);
    const [refused, next] = live.watches();
    expect(refused?.status).toBe(429);
    expect(next!.at - refused!.at).toBeGreaterThanOrEqual(1000 - 5);
    expect(next!.at - refused!.at).toBeLessThan(1500);
    expect(live.errors).toHaveLength(1);
    expect(live.errors[0]).toMatchObject({ reason: 'TooManyRequests', status: 429, retryAfterSeconds: 1, phase: 'watch' });
  });
});

describe('leaving', () => {
  it('a subscriber that leaves as soon as the informer syncs (firstValueFrom) leaves no request open', async () => {
    api = await startApiServer();
    api.create('configmaps', cm('a'));
    const tracker = new ServerRequestTracker(api.port);
    try {
      const cms = informer(api.kubeConfig, ConfigMap, { http: { userAgent: 'leaves-on-sync' } });
      await firstValueFrom(cms.synced$.pipe(filter(Boolean)));
      await sleep(100);
      expect(tracker.open('leaves-on-sync')).toEqual([]);
      expect(api.requests.filter((r) => r.watch)).toEqual([]);
    } finally {
      tracker.stop();
    }
  });
});
