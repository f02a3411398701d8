/**
 * How a watch recovers, through the emulator: stalls, very short watches,
 * clean ends, server and network errors, 429, and leaving.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import { ConfigMap, informer } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from './harness/live.ts';
import { InflightProbe, ServerRequestTracker } from './harness/probes.ts';
import { HarnessClock } from './harness/clock.ts';
import { reflectorConfig } from '../../src/2-source/listAndWatch.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';

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
  it('a watch silent for its timeout plus the default margin (30 s, on the informer’s clock) is aborted, reported as Timeout, and resumed from the last resourceVersion', async () => {
    api = await startApiServer({ bookmarkIntervalMs: 5000 });
    api.create('configmaps', cm('a'));
    // The first watch delivers one event, then goes silent without closing.
    api.faults.add({ match: { watch: true }, fault: { type: 'stallWatch', afterEvents: 1 } });
    // Real time, plus the jumps below: the margin is the default one, and the machine's speed cannot trip it.
    const clock = new HarnessClock();
    const marginMs = reflectorConfig({ decode: (raw) => raw }).stallMarginMs;
    live = run(api, ConfigMap, { minWatchTimeoutSeconds: 0.2, scheduler: clock, backoff: { initialMs: 10, maxMs: 20 } });
    // b's frame reaches the informer after the server wrote it and before b is on events$: its time on the
    // informer's clock lies between the two readings below, and so does the stall deadline, less timeout + margin.
    let bAt = 0;
    const seen = live.informer.events$.subscribe((e) => {
      if (e.object.metadata.name === 'b') bAt = clock.now();
    });
    try {
      await waitFor('the initial list', live.synced);
      const writtenAt = clock.now();
      const b = api.create('configmaps', cm('b'));
      await waitFor('b through the watch', () => live!.store()?.has('default/b') === true);
      const [stalled] = live.watches();
      await waitFor('the stall', () => stalled!.faultFiredAt !== undefined);
      const c = api.create('configmaps', cm('c')); // the stalled watch will not bring it
      const timeoutMs = Number(stalled!.query['timeoutSeconds']) * 1000;
      expect(timeoutMs).toBeGreaterThanOrEqual(200);
      expect(timeoutMs).toBeLessThan(400);

      // Short of the timeout plus the margin after the last frame: still waiting.
      clock.advance(writtenAt + timeoutMs + marginMs - 5 - clock.now());
      expect(live.errors).toEqual([]);
      // Past it: aborted at once, as a Timeout.
      clock.advance(bAt + timeoutMs + marginMs + 5 - clock.now());
      expect(live.errors.map((e) => [e.reason, e.phase])).toEqual([['Timeout', 'watch']]);

      await waitFor('c through the resumed watch', () => live!.store()?.get('default/c')?.metadata.resourceVersion === rvOf(c));
      const [, resumed] = live.watches();
      expect(stalled).toMatchObject({ fault: 'stallWatch', ended: 'client', eventsSent: 1 });
      expect(resumed?.query['resourceVersion']).toBe(rvOf(b));
      expect(live.errors).toHaveLength(1);
      expect(live.lists()).toHaveLength(1); // resumed, not relisted
      await converged(api, live, 'configmaps');
    } finally {
      seen.unsubscribe();
    }
  });
});

describe('very short watches', () => {
  it('a watch the server ends at once with no event counts as a failure: backoff, no reconnect storm', async () => {
    api = await startApiServer();
    api.faults.add({ match: { watch: true }, times: Infinity, fault: { type: 'closeWatch' } });
    // No jitter: waits of 20, 40, 80, 160, 160 … ms.
    live = run(api, ConfigMap, { backoff: { initialMs: 20, maxMs: 160 }, random: () => 0 });
    await waitFor('six watches', () => live!.watches().length >= 6);
    const watches = live.watches();
    // Each re-watch waits its backoff step (immediate re-watching would make hundreds in a second).
    const gaps = watches.slice(1).map((w, i) => w.at - watches[i]!.at);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(Math.min(20 * 2 ** i, 160) - 2));
    expect(live.errors.every((e) => e.reason === 'VeryShortWatch')).toBe(true);
    expect(live.errors.length).toBeGreaterThanOrEqual(watches.length - 1);
    expect(live.lists()).toHaveLength(1); // the resourceVersion is still good: re-watch, no relist
    expect(new Set(watches.map((w) => w.query['resourceVersion']))).toEqual(new Set([api.resourceVersion]));
  });

  it('a short watch that the server ends on time (its own short timeoutSeconds) is not a failure', async () => {
    api = await startApiServer();
    // A backoff would wait a minute: four watches in a row are only possible if each was resumed at once.
    live = run(api, ConfigMap, { minWatchTimeoutSeconds: 0.1, backoff: { initialMs: 60_000, maxMs: 60_000 } });
    await waitFor('four watches', () => live!.watches().length >= 4);
    expect(live.watches().every((w) => w.ended === 'timeout' || w.ended === undefined)).toBe(true);
    expect(live.errors).toEqual([]);
  });
});

describe('a clean end', () => {
  it('after real work resumes at once from the last resourceVersion, with no error', async () => {
    api = await startApiServer();
    api.faults.add({ match: { watch: true }, fault: { type: 'closeWatch', afterEvents: 2 } });
    // A backoff would wait a minute (the wait below gives up well before).
    live = run(api, ConfigMap, { backoff: { initialMs: 60_000, maxMs: 60_000 } });
    await waitFor('the initial list', live.synced);
    // The first watch is sent after the list is handed on: wait for it, or `next` below would take it.
    await waitFor('the first watch', () => live!.watches().length === 1);
    api.create('configmaps', cm('x'));
    const next = api.nextRequest((r) => r.watch, 20_000);
    const y = api.create('configmaps', cm('y')); // the second event: the server ends the watch cleanly
    const resumed = await next;
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
    // Not before Retry-After (the backoff alone would retry after 10–40 ms).
    expect(next!.at - refused!.at).toBeGreaterThanOrEqual(1000 - 5);
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
      // The informer's requests as it starts them (at its ListWatch), and its timers on a clock the test can read.
      const clock = new HarnessClock();
      const probe = new InflightProbe(() => clock.now());
      const listWatch = probe.wrap(httpListWatch(api.kubeConfig, { resource: ConfigMap }, { userAgent: 'leaves-on-sync' }));
      const cms = informer(listWatch, ConfigMap, { scheduler: clock });
      await firstValueFrom(cms.synced$.pipe(filter(Boolean)));
      // Left: the list was the only request it started, none is subscribed now, and no timer is armed that could start
      // another. So nothing more can happen, without waiting to see.
      expect(probe.requests.map((r) => r.watch)).toEqual([false]);
      expect(probe.current).toBe(0);
      expect(clock.armed()).toEqual([]);
      // The list's response may close at the server a moment later; then nothing is open, and no watch was ever sent.
      await waitFor('no request open', () => tracker.open('leaves-on-sync').length === 0);
      expect(api.requests.filter((r) => r.watch)).toEqual([]);
    } finally {
      tracker.stop();
    }
  });
});
