/**
 * A dynamic factory discovers again after a discovery that failed or could not read a group version, with the
 * reflector's backoff (default options), on its scheduler: here a VirtualTimeScheduler that the test flushes, so the
 * waits are read from its pending action and nothing waits on the wall clock for them. The informers and HTTP run in
 * real time against the emulator.
 */
import { VirtualTimeScheduler, type Observable, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamicInformerFactory, type DynamicEvent } from '../../src/discovery/index.ts';
import type { KubeObject } from '../../src/index.ts';
import { resourceName } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { until } from '../support/until.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

const MyApples = { group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple' };

function follow(events$: Observable<DynamicEvent<KubeObject>>) {
  const lifecycle: DynamicEvent<KubeObject>[] = [];
  subscriptions.push(events$.subscribe((e) => lifecycle.push(e)));
  return { started: (name: string) => lifecycle.some((e) => e.type === 'started' && resourceName(e.resource) === name) };
}

/** A factory at default options but its scheduler, once its CRD watch has listed (both early discoveries have started). */
async function factoryOn(clock: VirtualTimeScheduler) {
  const dynamic = dynamicInformerFactory(api!.kubeConfig, { scheduler: clock });
  subscriptions.push(dynamic.errors$.subscribe());
  subscriptions.push(dynamic.discovery$.subscribe());
  const crds = dynamic.factory.informers()[0]!;
  await new Promise<void>((resolve) => subscriptions.push(crds.synced$.subscribe((synced) => synced && resolve())));
  return dynamic;
}

/** The one retry pending (once the discovery that failed has ended): how long until it runs. */
async function pendingRetry(clock: VirtualTimeScheduler): Promise<number> {
  await until(() => clock.actions.length > 0, 'a retry to be scheduled');
  expect(clock.actions).toHaveLength(1);
  return clock.actions[0]!.delay - clock.now();
}

describe('dynamicInformerFactory: discovery is tried again after a fault', () => {
  for (const selection of ['all', ['myapples']] as const) {
    it(`a group version that fails discovery at start-up is discovered again, and its resources start (${JSON.stringify(selection)})`, async () => {
      api = await startApiServer({ resources: [MyApples] });
      const fault = api.faults.add({
        match: { path: '/apis/stable.example.com/v1' },
        fault: { type: 'status', code: 503 },
        times: Infinity,
      });
      const clock = new VirtualTimeScheduler();
      const dynamic = await factoryOn(clock);
      const seen = follow(dynamic.watch(selection as never));
      const first = await pendingRetry(clock);
      expect(first).toBeGreaterThanOrEqual(800);
      expect(first).toBeLessThan(1600);
      expect(seen.started('myapples.stable.example.com')).toBe(false);
      // Still failing: the next wait doubles.
      clock.flush();
      const second = await pendingRetry(clock);
      expect(second).toBeGreaterThanOrEqual(1600);
      expect(second).toBeLessThan(3200);

      fault.remove();
      clock.flush();
      await until(() => seen.started('myapples.stable.example.com'), 'myapples to start');
      // A clean read schedules nothing more.
      expect(clock.actions).toEqual([]);
    });
  }

  it('discovery failing as a whole (/apis) on both early discoveries is tried again until it reads', async () => {
    api = await startApiServer();
    const fault = api.faults.add({ match: { path: '/apis' }, fault: { type: 'status', code: 503 }, times: Infinity });
    const clock = new VirtualTimeScheduler();
    const dynamic = await factoryOn(clock);
    const seen = follow(dynamic.watch('all'));
    const first = await pendingRetry(clock);
    expect(first).toBeGreaterThanOrEqual(800);
    expect(first).toBeLessThan(1600);
    fault.remove();
    clock.flush();
    await until(() => seen.started('pods'), 'pods to start');
    expect(clock.actions).toEqual([]);
    expect(api.requests.filter((r) => r.path === '/apis' && r.status === 503).length).toBeGreaterThanOrEqual(2);
  });

  it("the wait's jitter is drawn from the factory's `random` (factoryOptions.random), not Math.random (audit23)", async () => {
    api = await startApiServer({ resources: [MyApples] });
    api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: Infinity });
    const clock = new VirtualTimeScheduler();
    const dynamic = dynamicInformerFactory(api.kubeConfig, { scheduler: clock, factoryOptions: { random: () => 0.5 } });
    subscriptions.push(dynamic.errors$.subscribe());
    subscriptions.push(dynamic.discovery$.subscribe());
    const crds = dynamic.factory.informers()[0]!;
    await new Promise<void>((resolve) => subscriptions.push(crds.synced$.subscribe((synced) => synced && resolve())));
    // 800 ms + random × jitter 1 × 800 ms: exactly 1,200 ms with random 0.5.
    expect(await pendingRetry(clock)).toBe(1200);
  });

  it("a 503's Retry-After longer than the backoff is the wait", async () => {
    api = await startApiServer({ resources: [MyApples] });
    api.faults.add({
      match: { path: '/apis/stable.example.com/v1' },
      fault: { type: 'status', code: 503, retryAfterSeconds: 7 },
      times: Infinity,
    });
    const clock = new VirtualTimeScheduler();
    await factoryOn(clock);
    expect(await pendingRetry(clock)).toBe(7000);
  });

  it('retries do not nest: what a discovery emits after many retries takes no deeper a stack than after a few', async () => {
    // A group version that keeps failing (an aggregated API down for days) means a retry every 30-60 s for good: each
    // must not run inside the last one's operators, or every emission climbs one level more per retry (memory, then
    // the stack). Two groups fail in turn, so each discovery serves something else and is emitted.
    const MyPears = { group: 'other.example.com', version: 'v1', plural: 'mypears', kind: 'MyPear' };
    api = await startApiServer({ resources: [MyApples, MyPears] });
    const paths = ['/apis/stable.example.com/v1', '/apis/other.example.com/v1'];
    api.faults.add({ match: { path: paths[0]! }, fault: { type: 'status', code: 503 }, times: Infinity });
    const clock = new VirtualTimeScheduler();
    const dynamic = await factoryOn(clock);
    const depths: number[] = [];
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = Infinity;
    try {
      subscriptions.push(dynamic.discovery$.subscribe(() => depths.push(new Error().stack!.split('\n').length)));
      await pendingRetry(clock);
      api.faults.clear();
      for (let i = 1; i <= 40; i++) {
        api.faults.add({ match: { path: paths[i % 2]! }, fault: { type: 'status', code: 503 }, times: 1 });
        const before = depths.length;
        clock.flush();
        await until(() => depths.length > before, `emission ${i}`);
        await pendingRetry(clock);
      }
    } finally {
      Error.stackTraceLimit = limit;
    }
    expect(depths.length).toBeGreaterThan(40);
    // Frames vary a little with which response came last; nested retries added ~8 a retry (~300 here).
    const early = Math.max(...depths.slice(0, 10));
    expect(Math.max(...depths.slice(-10))).toBeLessThan(early + 50);
  });

  it('unsubscribing leaves no retry pending', async () => {
    api = await startApiServer({ resources: [MyApples] });
    api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: Infinity });
    const clock = new VirtualTimeScheduler();
    const dynamic = await factoryOn(clock);
    follow(dynamic.watch('all'));
    await pendingRetry(clock);
    for (const s of subscriptions.splice(0)) s.unsubscribe();
    expect(clock.actions).toEqual([]);
  });
});
