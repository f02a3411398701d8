import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';
import { identity, take, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { InformerError, type KubeObject } from '../../src/index.ts';
import { resync, type SourceEvent } from '../../src/pipeline.ts';

type Obj = KubeObject;
const a: Obj = { metadata: { name: 'a', namespace: 'ns', resourceVersion: '2' } };
const events: Record<string, SourceEvent<Obj>> = {
  R: { type: 'replace', items: [], resourceVersion: '1' },
  S: { type: 'replace', items: [a], resourceVersion: '3' },
  a: { type: 'added', object: a, resourceVersion: '2' },
  b: { type: 'bookmark', resourceVersion: '4' },
  r: { type: 'resync' },
  e: { type: 'error', error: new InformerError('NetworkError', 'connection refused', { phase: 'watch' }) },
  l: { type: 'error', error: new InformerError('ServerError', 'HTTP 500', { status: 500, phase: 'list' }) },
  v: { type: 'error', error: new InformerError('ValidationFailed', 'bad object', { key: 'ns/a', phase: 'watch' }) },
  i: { type: 'error', error: new InformerError('IndexerError', 'index threw', { key: 'ns/a' }) },
  m: { type: 'error', error: new InformerError('MalformedLine', 'watch line is not JSON', { phase: 'watch' }) },
  w: { type: 'watch', resourceVersion: '4' },
  k: { type: 'deletedKey', key: 'ns/a', resourceVersion: '5' },
};

function testScheduler(): TestScheduler {
  return leakCheckingScheduler(1000);
}

/**
 * The test scheduler, noting the frame of every timer callback it runs: a timer
 * leaked past unsubscription keeps adding frames. (Every tick arms the next one
 * through the scheduler, so every later run goes through here too.)
 */
function noting(ts: TestScheduler): { scheduler: SchedulerLike; runs: number[] } {
  const runs: number[] = [];
  const scheduler: SchedulerLike = {
    now: () => ts.now(),
    schedule<S>(work: (this: SchedulerAction<S>, state?: S) => void, delay?: number, state?: S) {
      return ts.schedule(
        function (this: SchedulerAction<S>, value?: S) {
          runs.push(ts.now());
          work.call(this, value);
        },
        delay,
        state,
      );
    },
  };
  return { scheduler, runs };
}

describe('resync', () => {
  it('ticks every period, counted from the first replace; nothing before it', () => {
    const ts = testScheduler();
    ts.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b--R-a---S-------', events);
      const sub = '      ^-------------------!';
      // ticks at 10, 14, 18: every 4 frames from the first replace (a second replace does not restart the clock)
      expectObservable(source.pipe(resync<Obj>(4, ts)), sub).toBe('-a-b--R-a-r-S-r---r-', events);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });

  it('keeps ticking until unsubscribed, and unsubscribing frees the timer', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable, expectSubscriptions, flush }) => {
      const source = cold('R', events); // never completes
      expectObservable(source.pipe(resync<Obj>(3, ts)), '^---------!').toBe('R--r--r--r', events);
      expectSubscriptions(source.subscriptions).toBe('^---------!');
      flush();
      expect(ts.actions).toHaveLength(0);
    });
  });

  it('frees the timer on unsubscribe (no scheduled action left)', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectSubscriptions, flush }) => {
      const seen: string[] = [];
      const source = cold('-R', events);
      const subscription = source.pipe(resync<Obj>(5, ts)).subscribe((e) => seen.push(`${ts.now()}:${e.type}`));
      let pending = -1;
      ts.schedule(() => subscription.unsubscribe(), 13);
      ts.schedule(() => (pending = ts.actions.length), 13);
      flush();
      expect(seen).toEqual(['1:replace', '6:resync', '11:resync']);
      expect(pending).toBe(0);
      expectSubscriptions(source.subscriptions).toBe('^------------!');
    });
  });

  it('unsubscribed mid-period: the source is unsubscribed at that frame and no tick fires after it', () => {
    const ts = testScheduler();
    const { scheduler, runs } = noting(ts);
    ts.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('--R-a--------', events);
      const sub = '      ^------!';
      // The list at 2 arms it: a tick at 6; the one due at 10 must never run.
      expectObservable(source.pipe(resync<Obj>(4, scheduler)), sub).toBe('--R-a-r', events);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
    expect(runs).toEqual([6]);
  });

  it('unsubscribed by the subscriber during a tick (take): the source is unsubscribed and the timer does not reschedule', () => {
    const ts = testScheduler();
    const { scheduler, runs } = noting(ts);
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('R', events); // never completes
      expectObservable(source.pipe(resync<Obj>(3, scheduler), take(3))).toBe('R--r--(r|)', events);
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
    expect(runs).toEqual([3, 6]);
  });

  it('unsubscribed during the list that would arm it (first(), take(1)): no timer is started', () => {
    const ts = testScheduler();
    const { scheduler, runs } = noting(ts);
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('R', events); // never completes
      expectObservable(source.pipe(resync<Obj>(3, scheduler), take(1))).toBe('(R|)', events);
      expectSubscriptions(source.subscriptions).toBe('(^!)');
    });
    expect(runs).toEqual([]);
  });

  it('passes errors and completion through (and stops ticking)', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const completing = cold('R----|', events);
      expectObservable(completing.pipe(resync<Obj>(2, ts))).toBe('R-r-r|', events);
      expectSubscriptions(completing.subscriptions).toBe('^----!');
      const failure = new Error('x');
      const failing = cold('R--#', events, failure);
      expectObservable(failing.pipe(resync<Obj>(2, ts))).toBe('R-r#', events, failure);
      expectSubscriptions(failing.subscriptions).toBe('^--!');
    });
  });

  it('a period of 0 (or less), NaN or Infinity disables it', () => {
    expect(resync(0)).toBe(identity);
    expect(resync(-5)).toBe(identity);
    expect(resync(Number.NaN)).toBe(identity);
    expect(resync(Infinity)).toBe(identity);
    const ts = testScheduler();
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('R-----a-|', events);
      expectObservable(source.pipe(resync<Obj>(0, ts))).toBe('R-----a-|', events);
      expectSubscriptions(source.subscriptions).toBe('^-------!');
    });
  });

  it('ticks only while the watch is established: a transport fault stops it, a failing list and watch never tick', () => {
    const ts = testScheduler();
    ts.run(({ hot, expectObservable, expectSubscriptions }) => {
      // The watch fails at 2, before the first tick (3); list and watch keep failing (w: a watch opened, e/l/m: its fault) for 45 frames: no tick.
      const source = hot('R-e-w-e-w-l-w-m 30ms w-e', events);
      const sub = '      ^------------------------------------------------------------!';
      expectObservable(source.pipe(resync<Obj>(3, ts)), sub).toBe('R-e-w-e-w-l-w-m 30ms w-e', events);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });

  it('object faults (ValidationFailed, IndexerError) do not stop it; the next watch being opened re-arms it with a full period', () => {
    const ts = testScheduler();
    ts.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('R----v-i-e-w----b---------', events);
      const sub = '      ^-------------------------!';
      // Ticks at 4 and 8 (v at 5 and i at 7 change nothing); e at 9 stops it; the watch opened at 11
      // re-arms it (client-go restarts its timer with each ListAndWatch; a quiet type sends no event):
      // ticks at 15, 19 and 23 (the bookmark at 16 finds it armed).
      expectObservable(source.pipe(resync<Obj>(4, ts)), sub).toBe('R---rv-ire-w---rb--r---r--', events);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });

  it('re-armed by added, modified, deleted and deletedKey too, but only after a first list', () => {
    const ts = testScheduler();
    ts.run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('a-k-R-e-k-----', events);
      const sub = '      ^-------------!';
      expectObservable(source.pipe(resync<Obj>(3, ts)), sub).toBe('a-k-R-e-k--r--', events);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });
});
