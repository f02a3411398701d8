import { describe, expect, it } from 'vitest';
import { NEVER, concat, defer, map, merge, of, throwError, timer, type Observable } from 'rxjs';
import {
  DEFAULT_STALE_AFTER_MS,
  InformerError,
  informer,
  isStale,
  readiness,
  type InformerHealth,
  type KubeObject,
  type ListWatch,
} from '../../src/index.ts';
import { bookmark, failure, fakeInformer, fakeResource, kubeObj, listed, modified } from '../../src/testing/index.ts';
import { listPage, watchEvent } from '../../src/testing/fakeListWatch.ts';
import type { SourceEvent } from '../../src/pipeline.ts';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';

const s = 1000;
/** A source that emits each event at its time (ms), then stays open. */
const script = (steps: readonly [number, SourceEvent<KubeObject>][]): Observable<SourceEvent<KubeObject>> =>
  merge(...steps.map(([at, event]) => (at === 0 ? [event] : timer(at).pipe(map(() => event)))), NEVER) as Observable<
    SourceEvent<KubeObject>
  >;
const watch = (rv: string): SourceEvent<KubeObject> => ({ type: 'watch', resourceVersion: rv });

describe('health$ (default options, virtual time)', () => {
  it('follows list, watch, events, bookmarks and failures; re-emits every 10 s so ages move; frees its timer', () => {
    const scheduler = leakCheckingScheduler(300 * s);
    const seen: InformerHealth[] = [];
    scheduler.run(() => {
      const steps = script([
        [0, listed('1', kubeObj('a', { resourceVersion: '1' }))],
        [0, watch('1')],
        [10 * s, modified(kubeObj('a', { resourceVersion: '2' }))],
        [30 * s, bookmark('5')],
        [40 * s, failure('NetworkError', 'reset', { phase: 'watch' })],
        [41 * s, failure('Timeout', 'no response headers', { phase: 'watch' })],
        [45 * s, failure('ValidationFailed', 'bad', { phase: 'decode' })],
        [50 * s, watch('5')],
        [60 * s, bookmark('7')],
      ]);
      const pods = fakeInformer(fakeResource(), steps);
      const sub = pods.health$.subscribe((h) => seen.push(h));
      scheduler.schedule(() => sub.unsubscribe(), 100 * s);
    });
    const at = (t: number) => seen.filter((h) => h.at === t).at(-1)!;
    expect(seen[0]).toMatchObject({ name: 'widgets.example.com', watching: false, synced: false, consecutiveFailures: 0, at: 0 });
    // Listed, and a watch opened: not watching until the server has said something on it.
    expect(at(0)).toMatchObject({ watching: false, since: 0, synced: true, lastEventAt: 0, resourceVersion: '1', silentMs: 0 });
    expect(at(10 * s)).toMatchObject({ watching: true, since: 10 * s, lastEventAt: 10 * s, eventAgeMs: 0, resourceVersion: '2' });
    expect(at(20 * s)).toMatchObject({ eventAgeMs: 10 * s, bookmarkAgeMs: undefined, silentMs: 10 * s });
    expect(at(30 * s)).toMatchObject({ lastBookmarkAt: 30 * s, bookmarkAgeMs: 0, silentMs: 0, resourceVersion: '5' });
    expect(at(40 * s)).toMatchObject({
      watching: false,
      since: 40 * s,
      consecutiveFailures: 1,
      failingSince: 40 * s,
      lastFailure: 'NetworkError',
    });
    // A bad object is not a failure: the count stays, watching stays false.
    expect(at(45 * s)).toMatchObject({ watching: false, since: 40 * s, consecutiveFailures: 2, lastFailure: 'Timeout' });
    // Opened after failures: not watching until it is accepted (its first frame).
    expect(at(50 * s)).toMatchObject({ watching: false, since: 40 * s, consecutiveFailures: 2 });
    expect(at(60 * s)).toMatchObject({
      watching: true,
      since: 60 * s,
      consecutiveFailures: 0,
      failingSince: undefined,
      lastBookmarkAt: 60 * s,
      silentMs: 0,
    });
    expect(at(90 * s)).toMatchObject({ eventAgeMs: 80 * s, bookmarkAgeMs: 30 * s, silentMs: 30 * s });
    // The ticks: one every 10 s, none after unsubscribing at 100 s (the leak check would fail otherwise).
    const ticks = seen.filter((h) => h.at % (10 * s) === 0).map((h) => h.at);
    for (let t = 10 * s; t <= 90 * s; t += 10 * s) expect(ticks).toContain(t);
    expect(seen.every((h) => h.at < 100 * s)).toBe(true);
  });

  it('is stale after 120 s of failures only (the default), with the reason; fresh again once a watch opens', () => {
    const scheduler = leakCheckingScheduler(400 * s);
    const seen: InformerHealth[] = [];
    scheduler.run(() => {
      const steps = script([
        [0, listed('1', kubeObj('a', { resourceVersion: '1' }))],
        [0, watch('1')],
        [60 * s, failure('Timeout', 'no response headers within 30000 ms', { phase: 'watch' })],
        [200 * s, failure('Timeout', 'no response headers within 30000 ms', { phase: 'list' })],
        [250 * s, listed('9', kubeObj('a', { resourceVersion: '9' }))],
        [250 * s, watch('9')],
      ]);
      const sub = fakeInformer(fakeResource(), steps).health$.subscribe((h) => seen.push(h));
      scheduler.schedule(() => sub.unsubscribe(), 300 * s);
    });
    expect(DEFAULT_STALE_AFTER_MS).toBe(120 * s);
    const latestAt = (t: number) => seen.filter((h) => h.at <= t).at(-1)!;
    expect(isStale(latestAt(60 * s + 120 * s), 60 * s + 120 * s)).toBeUndefined();
    expect(readiness([latestAt(180 * s)], 180 * s)).toEqual({ ready: true, reasons: [] });
    expect(readiness([latestAt(180 * s + 1)], 180 * s + 1).ready).toBe(false);
    const late = readiness([latestAt(190 * s)], 190 * s);
    expect(late.ready).toBe(false);
    expect(late.reasons).toEqual(['widgets.example.com: failing for 130 s (1 failure in a row, last Timeout)']);
    expect(readiness([latestAt(250 * s)], 250 * s)).toEqual({ ready: true, reasons: [] });
    // Not synced is not ready either; silence counts only when asked for.
    expect(readiness([{ ...seen[0]! }], 0).reasons).toEqual(['widgets.example.com: not synced']);
    expect(isStale(latestAt(240 * s), 240 * s, { maxSilenceMs: 60 * s })).toMatch(
      /failing for 180 s \(2 failures in a row, last Timeout\)/,
    );
    expect(isStale(latestAt(299 * s), 299 * s, { maxSilenceMs: 60 * s })).toBeUndefined();
    expect(isStale(latestAt(299 * s), 299 * s + 61 * s, { maxSilenceMs: 60 * s })).toBe(
      'widgets.example.com: nothing from the server for 110 s',
    );
  });

  it('a quiet type (idle resumes, nothing heard) stays fresh; a watch that ends without failing ends a run of failures', () => {
    const scheduler = leakCheckingScheduler(700 * s);
    const seen: InformerHealth[] = [];
    scheduler.run(() => {
      const steps: [number, SourceEvent<KubeObject>][] = [
        [0, listed('1', kubeObj('a', { resourceVersion: '1' }))],
        [0, watch('1')],
        [300 * s, failure('ServerError', 'boom', { phase: 'watch' })],
        [301 * s, watch('1')],
      ];
      for (let t = 60 * s; t < 300 * s; t += 60 * s) steps.push([t, watch('1')]);
      steps.push([361 * s, watch('1')]);
      const sub = fakeInformer(fakeResource(), script(steps)).health$.subscribe((h) => seen.push(h));
      scheduler.schedule(() => sub.unsubscribe(), 600 * s);
    });
    const latestAt = (t: number) => seen.filter((h) => h.at <= t).at(-1)!;
    // The first idle resume shows the watch had been accepted (it ended without failing).
    expect(latestAt(59 * s)).toMatchObject({ watching: false, since: 0 });
    expect(latestAt(299 * s)).toMatchObject({ watching: true, since: 60 * s, consecutiveFailures: 0, silentMs: 290 * s });
    expect(readiness([latestAt(299 * s)], 299 * s).ready).toBe(true);
    expect(latestAt(301 * s)).toMatchObject({ watching: false, since: 300 * s, consecutiveFailures: 1, failingSince: 300 * s });
    expect(latestAt(361 * s)).toMatchObject({ watching: true, since: 361 * s, consecutiveFailures: 0, failingSince: undefined });
    expect(readiness([latestAt(599 * s)], 599 * s).ready).toBe(true);
  });

  it('does not flap during an outage: a watch the server refuses (503) is never watching; ready again at the first frame after it', () => {
    const scheduler = leakCheckingScheduler(1_000 * s);
    const seen: InformerHealth[] = [];
    let outage = false;
    const opened: number[] = [];
    scheduler.run(() => {
      const object = kubeObj('a', { apiVersion: 'example.com/v1', kind: 'Widget', resourceVersion: '10' });
      const refused = (phase: 'list' | 'watch') =>
        throwError(() => new InformerError('ServerError', 'the server is currently unable to handle the request', { status: 503, phase }));
      // The server says something on a watch 1 s after it opens (a bookmark), then nothing.
      const lw: ListWatch = {
        list: () => (outage ? refused('list') : of(listPage('10', [object]))),
        watch: () =>
          defer(() => {
            opened.push(scheduler.now());
            return outage
              ? refused('watch')
              : concat(timer(1 * s).pipe(map(() => watchEvent('BOOKMARK', { metadata: { resourceVersion: '11' } }))), NEVER);
          }),
      };
      // Default options: client-go's backoff, the 60 s idle rule, the 10 s health tick.
      const widgets = informer<KubeObject>(lw, fakeResource(), { random: () => 0.5 });
      const sub = widgets.health$.subscribe((h) => seen.push(h));
      scheduler.schedule(() => (outage = true), 30 * s);
      scheduler.schedule(() => (outage = false), 400 * s);
      scheduler.schedule(() => sub.unsubscribe(), 900 * s);
    });
    const latestAt = (t: number) => seen.filter((h) => h.at <= t).at(-1)!;
    expect(latestAt(0)).toMatchObject({ synced: true, watching: false });
    expect(latestAt(1 * s)).toMatchObject({ watching: true, since: 1 * s });
    // The outage: the idle rule resumes the quiet watch at 61 s; refused, and every retry after the backoff too.
    // (At 61 s the resumed watch is still watching: the one before it ended without failing. Then it is refused.)
    const during = seen.slice(seen.findIndex((h) => h.consecutiveFailures > 0)).filter((h) => h.at < 400 * s);
    const retries = opened.filter((t) => t > 61 * s && t < 400 * s);
    expect(retries.length).toBeGreaterThan(5);
    expect(during.length).toBeGreaterThan(retries.length);
    expect(during.filter((h) => h.watching)).toEqual([]);
    expect(latestAt(399 * s)).toMatchObject({ watching: false, since: 61 * s, failingSince: 61 * s });
    expect(readiness([latestAt(399 * s)], 399 * s).ready).toBe(false);
    // Back: the next retry opens a watch whose bookmark comes 1 s later; watching and ready at that instant, not at a tick.
    const back = opened.find((t) => t >= 400 * s)!;
    expect(back).toBeLessThan(431 * s);
    const recovered = seen.find((h) => h.at >= 400 * s && h.watching)!;
    expect(recovered).toMatchObject({ at: back + 1 * s, since: back + 1 * s, consecutiveFailures: 0, failingSince: undefined });
    expect(readiness([recovered], recovered.at).ready).toBe(true);
    expect(seen.filter((h) => h.at >= back && h.at < back + 1 * s).every((h) => !h.watching)).toBe(true);
  });
});
