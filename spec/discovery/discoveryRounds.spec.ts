/**
 * How the dynamic factory runs its discovery rounds (src/discovery/discoveryRounds.ts) behind its triggers
 * (discoveryTriggers, default options), in virtual time (TestScheduler, 1 frame = 1 ms), each round lasting what the
 * scenario says (the server's time to answer). audit28 found that every debounced trigger cancelled the round in
 * flight: rounds longer than 1 s and a CRD change every second meant no round ever finished.
 */
import { Subject, interval, map, take, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { PartialObjectMetadata } from '../../src/0-model/metadata.ts';
import type { InformerEvent } from '../../src/4-store/informerEvent.ts';
import { discoveryRounds } from '../../src/discovery/discoveryRounds.ts';
import { discoveryTriggers } from '../../src/discovery/discoveryTriggers.ts';

type Event = InformerEvent<PartialObjectMetadata>;
const created = (name: string): Event => ({
  type: 'added',
  object: { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name, resourceVersion: '1', generation: 1 } },
  isInInitialList: false,
});

interface Round {
  readonly start: number;
  readonly end: number;
}

/**
 * Rounds run behind the default triggers: one at 0, then as CRD creations (at `createdAt`) trigger them; round `i`
 * lasts `durationMs(i)` and asks for a retry in `retryMs(i)` (undefined: none). Returns the rounds that finished.
 */
function rounds(
  createdAt: readonly number[],
  durationMs: (i: number) => number,
  retryMs: (i: number) => number | undefined = () => undefined,
  endMs = 600_000,
): Round[] {
  const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  const finished: Round[] = [];
  scheduler.run(({ cold }) => {
    const events = new Subject<Event>();
    const triggers$ = discoveryTriggers(events, new Subject<void>(), () => true, {}, scheduler);
    let count = 0;
    const round = (): Observable<{ i: number; start: number }> => {
      const i = count++;
      const start = scheduler.now();
      return timer(durationMs(i), scheduler).pipe(map(() => ({ i, start })));
    };
    const subscription = discoveryRounds(triggers$.pipe(map(() => 'trigger')), round, ({ i }) => retryMs(i), scheduler).subscribe(
      ({ start }) => finished.push({ start, end: scheduler.now() }),
    );
    // A first round (at 250 ms: a CRD created at 0).
    events.next(created('first.example.com'));
    for (const [n, at] of createdAt.entries()) cold(`${at}ms a`).subscribe(() => events.next(created(`c${n}.example.com`)));
    cold(`${endMs}ms a`).subscribe(() => subscription.unsubscribe());
  });
  return finished;
}

/** When the first round that started after `at` finished (what a CRD created at `at` waits for). */
const seenAt = (finished: readonly Round[], at: number) => finished.find((r) => r.start >= at)?.end;

describe('discoveryRounds behind the default triggers', () => {
  it('a CRD created every 400 ms for 8 s, rounds of 1.2 s: each is seen within 1 s + two rounds, none cancelled', () => {
    const createdAt = Array.from({ length: 20 }, (_, i) => 400 * (i + 1));
    const finished = rounds(createdAt, () => 1200);
    for (const at of createdAt) expect(seenAt(finished, at)! - at, `created at ${at}`).toBeLessThanOrEqual(1000 + 2 * 1200);
    // One round at a time, each one started when the last ended or later.
    for (let i = 1; i < finished.length; i++) expect(finished[i]!.start).toBeGreaterThanOrEqual(finished[i - 1]!.end);
    // Rounds end during the burst, not only after it (a switchMap cancelled every one of them until 9 s).
    expect(finished.filter((r) => r.end < 8000).length).toBeGreaterThanOrEqual(4);
  });

  it('an aggregated API that times out every round (30 s), a CRD created every 1.5 s for 2 min: each seen within 1 s + 60 s', () => {
    const createdAt = Array.from({ length: 80 }, (_, i) => 1500 * (i + 1));
    const finished = rounds(createdAt, () => 30_000);
    for (const at of createdAt) expect(seenAt(finished, at)! - at, `created at ${at}`).toBeLessThanOrEqual(1000 + 2 * 30_000);
  });

  it('many triggers during one round: exactly one more round after it', () => {
    // Round 0 lasts 10 s; CRDs created at 2, 4, 6, 8 s trigger discoveries (debounced) while it runs.
    const finished = rounds([2000, 4000, 6000, 8000], (i) => (i === 0 ? 10_000 : 100));
    expect(finished).toEqual([
      { start: 250, end: 10_250 },
      { start: 10_250, end: 10_350 },
    ]);
  });

  it('a retry waiting is replaced by a trigger, and cancelled when a round starts', () => {
    // Round 0 asks for a retry in 30 s; a CRD created at 5 s starts a round at 5.25 s that reads everything.
    const finished = rounds(
      [5000],
      () => 100,
      (i) => (i === 0 ? 30_000 : undefined),
      120_000,
    );
    expect(finished).toEqual([
      { start: 250, end: 350 },
      { start: 5250, end: 5350 },
    ]);
  });

  it('a round that keeps failing is retried after each, one at a time', () => {
    const finished = rounds(
      [],
      () => 100,
      () => 1000,
      5_000,
    );
    expect(finished.map((r) => r.start)).toEqual([250, 1350, 2450, 3550, 4650]);
  });
});
