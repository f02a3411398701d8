/**
 * The reflector and its ListWatch's `reachable$` (the transport's probe: "the server answers again"), in virtual
 * time at the default backoff (800 ms doubling to 30 s; `random: () => 0` puts each wait at its lower bound).
 * The server refuses connections from 5 ms to 20 s, and its probe first answers at 20.5 s.
 */
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { Observable, defer, map, throwError, timer, type ObservableInput } from 'rxjs';
import { InformerError, KubeObject } from '../../src/index.ts';
import { decoder, listAndWatch, type ListWatch, type SourceEvent, type WatchFrame } from '../../src/pipeline.ts';
import { testScheduler } from '../support/testScheduler.ts';
import { fakeListWatch, httpFailure, listPage, watchEvent, type FakeListWatch } from '../support/fakeListWatch.ts';

const GUARD_MS = 3600_000;
/** When the server refuses connections, comes back, and its probe first answers. */
const DOWN_AT = 5;
const BACK_AT = 20_000;
const ANSWERED_AT = 20_500;

type Obj = KubeObject;
const obj = (name: string, rv: string): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});
const refused = () =>
  new InformerError('NetworkError', 'watch /api/v1/configmaps: connect ECONNREFUSED 127.0.0.1:6443', { phase: 'watch', unreachable: true });

/** The probe's signal: emits at {@link ANSWERED_AT} (at once after it); counts its subscribers. */
function probe(ts: TestScheduler) {
  const counts = { subscribed: 0, active: 0 };
  const reachable$ = new Observable<void>((subscriber) => {
    counts.subscribed++;
    counts.active++;
    const inner = timer(Math.max(0, ANSWERED_AT - ts.now()))
      .pipe(map((): void => undefined))
      .subscribe(subscriber);
    return () => {
      counts.active--;
      inner.unsubscribe();
    };
  });
  return { reachable$, counts };
}

/**
 * A list at rv 10, then watches: the first fails at {@link DOWN_AT} with `fault()`, every later one before
 * {@link BACK_AT} fails at once with `fault()`, the first after it delivers an event.
 */
function outage(ts: TestScheduler, cold: TestScheduler['createColdObservable'], fault: () => InformerError): FakeListWatch {
  const whileDown = (): ObservableInput<WatchFrame> =>
    ts.now() < BACK_AT ? throwError(fault) : cold<WatchFrame>('a', { a: watchEvent('ADDED', obj('b', '11')) });
  return fakeListWatch({
    lists: [cold('(p|)', { p: listPage('10', [obj('a', '5')]) })],
    watches: [cold<WatchFrame>('-----#', undefined, fault()), ...Array.from({ length: 30 }, () => () => defer(whileDown))],
  });
}

function run(body: (ts: TestScheduler, cold: TestScheduler['createColdObservable'], flush: () => void) => void): void {
  const ts = testScheduler();
  ts.run(({ cold, flush }) => {
    ts.maxFrames = GUARD_MS;
    body(ts, cold, flush);
  });
}

function start(ts: TestScheduler, listWatch: ListWatch, untilMs: number): SourceEvent<Obj>[] {
  const events: SourceEvent<Obj>[] = [];
  const subscription = listAndWatch<Obj>(listWatch, { decode: decoder(KubeObject), scheduler: ts, random: () => 0 }).subscribe((e) =>
    events.push(e),
  );
  ts.schedule(() => subscription.unsubscribe(), untilMs);
  return events;
}

const withSignal = (fake: FakeListWatch, reachable$: Observable<void>): ListWatch => ({
  list: (options) => fake.list(options),
  watch: (options) => fake.watch(options),
  reachable$,
});

describe('listAndWatch and reachable$: a wait after a failure no server answered', () => {
  it('ends when the server answers again, not after the backoff grown meanwhile', () => {
    run((ts, cold, flush) => {
      const fake = outage(ts, cold, refused);
      const { reachable$, counts } = probe(ts);
      const events = start(ts, withSignal(fake, reachable$), 60_000);
      flush();
      // Its own retries keep client-go's backoff while the server is down (waits of 0.8, 1.6, 3.2, 6.4 s) …
      expect(fake.watches.map((w) => w.calledAt)).toEqual([0, 805, 2405, 5605, 12005, ANSWERED_AT]);
      // … and the one after 12.8 s (at 24.8 s) is not waited for: it resumes when the probe answers.
      expect(events.filter((e) => e.type === 'added').length).toBe(1);
      expect(fake.lists.length).toBe(1); // resumed from rv 10, not relisted
      expect(fake.watches.at(-1)?.options.resourceVersion).toBe('10');
      // One subscription per wait after a refusal; none left.
      expect(counts.subscribed).toBe(5);
      expect(counts.active).toBe(0);
    });
  });

  it('without reachable$ (a ListWatch that cannot tell) waits the backoff, as before', () => {
    run((ts, cold, flush) => {
      const fake = outage(ts, cold, refused);
      start(ts, fake, 60_000);
      flush();
      expect(fake.watches.map((w) => w.calledAt)).toEqual([0, 805, 2405, 5605, 12005, 24805]);
    });
  });

  it('unsubscribing while it waits leaves nothing subscribed', () => {
    run((ts, cold, flush) => {
      const fake = outage(ts, cold, refused);
      const { reachable$, counts } = probe(ts);
      start(ts, withSignal(fake, reachable$), 3_000);
      flush();
      expect(counts.subscribed).toBe(3);
      expect(counts.active).toBe(0);
    });
  });
});

describe('listAndWatch and reachable$: failures the server answered keep their backoff', () => {
  for (const [name, fault, times = [0, 805, 2405, 5605, 12005, 24805]] of [
    ['503', () => httpFailure(503)],
    // The first wait is the Retry-After (1 s, longer than 800 ms); the others, the backoff.
    ['429 with Retry-After: 1', () => httpFailure(429, 'watch', { retryAfterSeconds: 1 }), [0, 1005, 2605, 5805, 12205, 25005]],
    ['a watch broken mid-stream', () => new InformerError('NetworkError', 'watch: the connection closed mid-stream', { phase: 'watch' })],
  ] as [string, () => InformerError, number[]?][]) {
    it(`${name}: the probe answering changes nothing, and is never asked`, () => {
      run((ts, cold, flush) => {
        const fake = outage(ts, cold, fault);
        const { reachable$, counts } = probe(ts);
        start(ts, withSignal(fake, reachable$), 60_000);
        flush();
        expect(fake.watches.map((w) => w.calledAt)).toEqual(times);
        expect(counts.subscribed).toBe(0);
      });
    });
  }
});
