/**
 * The probe of a server that does not answer (`src/1-transport/reachability.ts`): its pace (a pure rule,
 * tabled), the shared signal in virtual time, what counts as an answer, and which transport errors are
 * `unreachable` (over real HTTP to the emulator).
 */
import { Observable, VirtualAction, VirtualTimeScheduler, firstValueFrom, of, throwError } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../../src/0-model/errors.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import {
  DEFAULT_PROBE_INITIAL_MS,
  DEFAULT_PROBE_MAX_MS,
  NO_PROBES,
  isAnswer,
  nextProbe,
  probeSignal,
  reachable,
  type ProbePace,
} from '../../src/1-transport/reachability.ts';
import { MAX_TIMER_DELAY_MS } from '../../src/util/scheduleAfter.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

describe('nextProbe: the wait before each probe', () => {
  /** The waits of probes sent back to back from `now = 0`, with a fixed random number. */
  const waits = (n: number, random: number, pace: ProbePace = NO_PROBES, from = 0) => {
    const out: number[] = [];
    let now = from;
    for (let i = 0; i < n; i++) {
      const next = nextProbe(pace, now, {}, () => random);
      out.push(next.waitMs);
      pace = next.pace;
      now += next.waitMs;
    }
    return { out, pace, now };
  };

  it.each([
    { random: 0, expected: [500, 1000, 2000, 2000, 2000] },
    { random: 0.5, expected: [750, 1500, 3000, 3000, 3000] },
    { random: 0.999, expected: [999.5, 1999, 3998, 3998, 3998] },
  ])('at the defaults, random $random: $expected', ({ random, expected }) => {
    expect(waits(5, random).out).toEqual(expected);
  });

  it('the defaults: the first probe after 0.5–1 s, never more than 4 s between two', () => {
    expect(DEFAULT_PROBE_INITIAL_MS).toBe(500);
    expect(2 * DEFAULT_PROBE_MAX_MS).toBeLessThanOrEqual(4_000);
  });

  it('starts over after 2 min without a probe, not after an answer', () => {
    const { pace, now } = waits(4, 0);
    expect(nextProbe(pace, now + 1_000, {}, () => 0).waitMs).toBe(2_000); // soon after: the pace goes on
    expect(nextProbe(pace, now + 120_001, {}, () => 0).waitMs).toBe(500); // two quiet minutes: from the start
  });

  it("never waits past Node's timer limit (a longer timer would fire after 1 ms: a probe each millisecond)", () => {
    for (const options of [
      { initialMs: 30 * 86_400_000, maxMs: 40 * 86_400_000 },
      { maxMs: Infinity, initialMs: Infinity },
    ]) {
      for (const random of [0.5, 0]) {
        const next = nextProbe(NO_PROBES, 0, options, () => random);
        expect(next.waitMs).toBe(MAX_TIMER_DELAY_MS); // random 0 and Infinity: no jitter, not NaN (a wait of 0)
      }
    }
  });

  it('honours its options', () => {
    const options = { initialMs: 100, maxMs: 250, jitter: 0 };
    let pace = NO_PROBES;
    const out: number[] = [];
    for (let i = 0; i < 4; i++) {
      const next = nextProbe(pace, i * 1_000, options, () => 0.9);
      out.push(next.waitMs);
      pace = next.pace;
    }
    expect(out).toEqual([100, 200, 250, 250]);
  });
});

describe('isAnswer', () => {
  it.each([
    ['a 200', { major: '1' }, true],
    ['a 403', new InformerError('Forbidden', 'HTTP 403', { status: 403 }), true],
    ['a 503', new InformerError('ServerError', 'HTTP 503', { status: 503 }), true],
    ['a refused connection', new InformerError('NetworkError', 'ECONNREFUSED', { unreachable: true }), false],
    ['no headers in time', new InformerError('Timeout', 'no response headers within 5000 ms', {}), false],
    ['a credential plugin that failed', new InformerError('CredentialPlugin', 'exit 1', {}), false],
    ['any other thrown error', new Error('boom'), false],
  ])('%s: %s', (_, outcome, answered) => {
    expect(isAnswer(outcome)).toBe(answered);
  });
});

describe('probeSignal, in virtual time', () => {
  /** A probe refused until `answersAt`, answered from then on; counts what was asked of it. */
  function scripted(scheduler: VirtualTimeScheduler, answersAt: number) {
    const sent: number[] = [];
    let open = 0;
    const probe = new Observable<unknown>((subscriber) => {
      sent.push(scheduler.now());
      open++;
      const outcome =
        scheduler.now() >= answersAt
          ? of({ major: '1' })
          : throwError(() => new InformerError('NetworkError', 'refused', { unreachable: true }));
      const inner = outcome.subscribe(subscriber);
      return () => {
        open--;
        inner.unsubscribe();
      };
    });
    return { probe, sent, open: () => open };
  }

  it('one probe at a time for every waiter, each answered by the same first answer; nothing left afterwards', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 60_000);
    const { probe, sent, open } = scripted(scheduler, 20_000);
    const signal = probeSignal(probe, { scheduler, random: () => 0 });
    const heard: string[] = [];
    for (const who of ['a', 'b', 'c'])
      signal.subscribe({ next: () => heard.push(`${who}@${scheduler.now()}`), complete: () => heard.push(`${who} done`) });
    scheduler.flush();
    // 0.5, 1.5, 3.5, then every 2 s: the probe at 21.5 s is the first after the server answers (at 20 s).
    expect(sent).toEqual([500, 1_500, 3_500, 5_500, 7_500, 9_500, 11_500, 13_500, 15_500, 17_500, 19_500, 21_500]);
    expect(heard).toEqual(['a@21500', 'b@21500', 'c@21500', 'a done', 'b done', 'c done']);
    expect(open()).toBe(0);
    expect(scheduler.actions).toEqual([]);
  });

  it('stops when the last waiter leaves (no probe, no timer), and goes on at its pace when another comes soon', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 60_000);
    const { probe, sent } = scripted(scheduler, Infinity);
    const signal = probeSignal(probe, { scheduler, random: () => 0 });
    const first = signal.subscribe();
    const second = signal.subscribe();
    scheduler.schedule(() => first.unsubscribe(), 2_000);
    scheduler.schedule(() => second.unsubscribe(), 4_000);
    scheduler.schedule(() => {
      signal.subscribe();
    }, 5_000);
    scheduler.maxFrames = 10_000;
    scheduler.flush();
    // 0.5, 1.5, 3.5; nobody waits from 4 s to 5 s; then the pace goes on (2 s), not from 0.5 s again.
    expect(sent).toEqual([500, 1_500, 3_500, 7_000, 9_000]);
  });

  it('unsubscribing aborts a probe in flight', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 60_000);
    let aborted = 0;
    const hanging = new Observable<unknown>(() => () => aborted++);
    const subscription = probeSignal(hanging, { scheduler, random: () => 0 }).subscribe();
    scheduler.schedule(() => subscription.unsubscribe(), 1_000);
    scheduler.flush();
    expect(aborted).toBe(1);
    expect(scheduler.actions).toEqual([]);
  });
});

describe('reachable: one signal per KubeConfig and server', () => {
  it('is shared by the ListWatches of one KubeConfig and server; another KubeConfig has its own; none without a cluster', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const target = { resource: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true } };
    const a = httpListWatch(kc, target).reachable$;
    expect(a).toBeDefined();
    expect(httpListWatch(kc, { ...target, namespace: 'other' }).reachable$).toBe(a);
    const other = new KubeConfig();
    other.loadFromString(kc.exportConfig());
    expect(httpListWatch(other, target).reachable$).not.toBe(a);
    expect(httpListWatch(kc, target, { reachability: false }).reachable$).toBeUndefined();
    expect(reachable(new KubeConfig(), of(undefined))).toBeUndefined();
  });
});

describe('which transport errors are unreachable (over HTTP to the emulator)', () => {
  let api: ApiServer | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it.each([
    ['HTTP/1.1', {}],
    ['HTTP/2', { http2: true }],
  ] as const)('%s: a refused connection is; a watch the server dropped mid-stream, or a 404, is not', async (_, options) => {
    api = await startApiServer({ namespaces: ['ns'], ...options });
    const kc = new KubeConfig();
    kc.loadFromString(api.kubeConfig.exportConfig());
    const target = { resource: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true }, namespace: 'ns' };
    const listWatch = httpListWatch(kc, target);
    const failure = (source: Observable<unknown>) =>
      new Promise<InformerError>((resolve) => source.subscribe({ error: (error: InformerError) => resolve(error) }));

    const missing = await failure(httpListWatch(kc, { ...target, resource: { ...target.resource, plural: 'nothings' } }).list({}));
    expect([missing.status, missing.unreachable]).toEqual([404, false]);

    // A watch the server dropped mid-stream: it had answered (over HTTP/2 as over HTTP/1.1).
    const dropped = new Promise<InformerError | 'ended'>((resolve) =>
      listWatch.watch({ resourceVersion: api!.resourceVersion }).subscribe({ error: resolve, complete: () => resolve('ended') }),
    );
    await api.waitForRequest((r) => r.watch);
    await api.down();
    const midStream = await dropped;
    expect(midStream === 'ended' ? midStream : [midStream.reason, midStream.unreachable]).toEqual(['NetworkError', false]);

    const refused = await failure(listWatch.list({}));
    expect([refused.reason, refused.unreachable], refused.message).toEqual(['NetworkError', true]);
    expect(refused.message).toMatch(/ECONNREFUSED/);

    // The probe: unanswered while down, answered once back.
    const probeOnce = async () =>
      firstValueFrom(probeSignal(new Observable((s) => void listWatch.list({}).subscribe(s)), { initialMs: 1, maxMs: 1 }));
    await api.up();
    await expect(probeOnce()).resolves.toBeUndefined();
  });
});
