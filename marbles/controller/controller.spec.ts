import { describe, expect, it } from 'vitest';
import type { TestScheduler } from 'rxjs/testing';
import { testScheduler } from '../support/testScheduler.ts';
import { Subject, map, take, throwError, timer } from 'rxjs';
import type { KubeObject } from '../../src/0-model/objects.ts';
import type { Store } from '../../src/4-store/store.ts';
import {
  TerminalError,
  controller,
  done,
  generationChanged,
  requeueAfter,
  type ReconcileOutcome,
  type ReconcileResult,
} from '../../src/controller/index.ts';
import { InformerError } from '../../src/0-model/errors.ts';
import { itemExponentialFailureRateLimiter } from '../../src/workqueue/index.ts';
import { added, deleted, fakeInformer, fakeResource, kubeObj, listed, modified } from '../../src/testing/marbles.ts';

const Widgets = fakeResource();
const Gadgets = fakeResource({ plural: 'gadgets', kind: 'Gadget' });
const brief = (o: ReconcileOutcome) => `${o.key}:${o.result}`;

function run(body: (helpers: Parameters<Parameters<TestScheduler['run']>[0]>[0], scheduler: TestScheduler) => void) {
  const scheduler = testScheduler();
  scheduler.run((helpers) => body(helpers, scheduler));
}

describe('controller (virtual time)', () => {
  it('keyFilter keeps keys out of the queue (e.g. keys of shards another replica holds), from every input', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(
        Widgets,
        cold('l-m', { l: listed('1', kubeObj('a'), kubeObj('b')), m: modified(kubeObj('c', { resourceVersion: '2' })) }),
      );
      const reconciled: string[] = [];
      const ctl = controller({
        for: widgets,
        scheduler,
        keyFilter: (key) => key !== 'default/b',
        reconcile: (key) => void reconciled.push(key),
      });
      ctl.outcomes$.subscribe();
      scheduler.flush();
      expect(reconciled).toEqual(['default/a', 'default/c']);
    });
  });

  it('a predicate, a watches map or a keyFilter that throws is reported on errors$ with the key, and the controller goes on', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(
        Widgets,
        cold('l--m', { l: listed('1', kubeObj('a'), kubeObj('boom')), m: modified(kubeObj('a', { resourceVersion: '2' })) }),
      );
      const gadgets = fakeInformer(Gadgets, cold('l', { l: listed('1', kubeObj('g1'), kubeObj('g2')) }));
      const reconciled: string[] = [];
      const ctl = controller({
        for: widgets,
        watches: [{ informer: gadgets, map: (o) => (o.metadata.name === 'g2' ? (undefined as unknown as string[]) : ['default/a']) }],
        predicate: (e) => {
          if (e.object.metadata.name === 'boom') throw new Error('predicate bug');
          return true;
        },
        keyFilter: (key) => {
          if (key === 'default/a' && scheduler.now() === 3) throw new Error('filter bug');
          return true;
        },
        scheduler,
        reconcile: (key) => void reconciled.push(`${key}@${scheduler.now()}`),
      });
      const errors: string[] = [];
      ctl.errors$.subscribe((e) => errors.push(`${e.reason} ${e.key ?? '-'}: ${e.message.replace(/^controller \w+: /, '')}`));
      ctl.outcomes$.subscribe();
      scheduler.flush();
      expect(errors).toEqual([
        'HandlerError default/boom: predicate threw for default/boom: predicate bug',
        'HandlerError default/g2: a watches map threw for default/g2: returned undefined, not an array of keys',
        'HandlerError default/a: keyFilter threw for default/a: filter bug',
      ]);
      // boom passed despite its predicate fault; a's update at 3 was kept out by its filter fault.
      expect(reconciled).toEqual(['default/a@0', 'default/boom@0']);
    });
  });

  it('starts reconciling only once synced, dedups keys queued meanwhile, and never runs a key twice at once', () => {
    run(({ cold }, scheduler) => {
      const a1 = kubeObj('a', { resourceVersion: '2' });
      const a2 = kubeObj('a', { resourceVersion: '3' });
      const widgets = fakeInformer(
        Widgets,
        cold('--l-m-m-------', { l: listed('1', kubeObj('a'), kubeObj('b')), m: modified(a1) }).pipe(
          map((e, i) => (i === 2 ? modified(a2) : e)),
        ),
      );
      const calls: string[] = [];
      const ctl = controller({
        for: widgets,
        scheduler,
        concurrency: 2,
        reconcile: (key) => {
          calls.push(`${key}@${scheduler.now()}`);
          return timer(3).pipe(map(() => done()));
        },
      });
      // list at 2: a and b start at once (2 workers) and end at 5; a was modified at 4 and 6:
      // one more reconcile of a, after the first ends (5 → 8), then the second modification (6) once more (8 → 11).
      const outcomes: string[] = [];
      ctl.outcomes$.subscribe((o) => outcomes.push(`${brief(o)}@${scheduler.now()}`));
      scheduler.flush();
      expect(outcomes).toEqual(['default/a:success@5', 'default/b:success@5', 'default/a:success@8', 'default/a:success@11']);
      expect(calls).toEqual(['default/a@2', 'default/b@2', 'default/a@5', 'default/a@8']);
    });
  });

  it('requeues failures with per-key exponential backoff, and resets it on success', () => {
    run(({ cold, expectObservable }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a')) }));
      let attempts = 0;
      const ctl = controller({
        for: widgets,
        scheduler,
        rateLimiter: itemExponentialFailureRateLimiter<string>(10, 1000),
        reconcile: () => (++attempts < 4 ? throwError(() => new Error(`try ${attempts}`)) : done()),
      });
      // failures at 0, 10, 30 (waits 10, 20, 40), success at 70
      expectObservable(ctl.outcomes$.pipe(map((o) => (o.result === 'error' ? `e${o.requeues}` : o.result))), '^ 200ms !').toBe(
        'a 9ms b 19ms c 39ms d',
        { a: 'e1', b: 'e2', c: 'e3', d: 'success' },
      );
      scheduler.flush();
      expect(ctl.queue.numRequeues('default/a')).toBe(0);
      expect(ctl.metrics().reconcileTotal).toEqual({ success: 1, error: 3, requeue: 0, requeue_after: 0 });
      expect(ctl.metrics()).toMatchObject({
        reconcileErrorsTotal: 3,
        reconcileTimeSeconds: { count: 4 },
        activeWorkers: 0,
        maxConcurrentReconciles: 1,
      });
    });
  });

  it('a rateLimiter that throws (or gives no number) is reported on errors$; the key backs off 5 ms, 10 ms, … instead, never dropped', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a'), kubeObj('n')) }));
      const runs: Record<string, number> = {};
      const ctl = controller({
        for: widgets,
        scheduler,
        rateLimiter: {
          when: (key) => {
            if (key === 'default/n') return Number.NaN;
            throw new Error('limiter broke');
          },
          forget: () => {
            throw new Error('forget broke');
          },
          numRequeues: (key) => {
            if (key === 'default/n') throw new Error('count broke');
            return 0;
          },
        },
        reconcile: (key) => ((runs[key] = (runs[key] ?? 0) + 1) < 3 ? throwError(() => new Error('not yet')) : done()),
      });
      const errors: string[] = [];
      ctl.errors$.subscribe((e) => errors.push(`${e.reason} ${e.message.replace(/^controller \w+: /, '')}`));
      const outcomes: string[] = [];
      ctl.outcomes$.subscribe((o) => outcomes.push(`${brief(o)}@${scheduler.now()}`));
      scheduler.flush();
      // Both keys fail at 0 and retry after the fallback's 5 ms, fail again and retry after 10 ms, then succeed.
      expect(outcomes).toEqual([
        'default/a:error@0',
        'default/n:error@0',
        'default/a:error@5',
        'default/n:error@5',
        'default/a:success@15',
        'default/n:success@15',
      ]);
      expect(errors.filter((e) => e.includes('default/a'))).toEqual([
        'HandlerError rateLimiter.when threw for default/a: limiter broke',
        'HandlerError rateLimiter.when threw for default/a: limiter broke',
        'HandlerError rateLimiter.forget threw for default/a: forget broke',
      ]);
      expect(new Set(errors.filter((e) => e.includes('default/n')))).toEqual(
        new Set([
          'HandlerError rateLimiter.when threw for default/n: returned NaN, not a finite delay in ms',
          'HandlerError rateLimiter.numRequeues threw for default/n: count broke',
          'HandlerError rateLimiter.forget threw for default/n: forget broke',
        ]),
      );
    });
  });

  it('a rateLimiter whose when() gives Infinity is reported and the key backs off 5 ms, 10 ms, … (never parked for good); a negative delay is 0', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('i'), kubeObj('m')) }));
      const runs: Record<string, number> = {};
      const ctl = controller({
        for: widgets,
        scheduler,
        rateLimiter: { when: (key) => (key === 'default/i' ? Infinity : -5), forget: () => {}, numRequeues: () => 0 },
        reconcile: (key) => ((runs[key] = (runs[key] ?? 0) + 1) < 3 ? throwError(() => new Error('not yet')) : done()),
      });
      const errors: string[] = [];
      ctl.errors$.subscribe((e) => errors.push(`${e.reason} ${e.message.replace(/^controller \w+: /, '')}`));
      const outcomes: string[] = [];
      ctl.outcomes$.subscribe((o) => outcomes.push(`${brief(o)}@${scheduler.now()}`));
      scheduler.flush();
      expect(outcomes).toEqual([
        'default/i:error@0',
        'default/m:error@0',
        'default/m:error@0', // -5 is 0: again at once (at the scheduler's next action, the same frame)
        'default/m:success@0',
        'default/i:error@5',
        'default/i:success@15',
      ]);
      expect(errors).toEqual([
        'HandlerError rateLimiter.when threw for default/i: returned Infinity, not a finite delay in ms',
        'HandlerError rateLimiter.when threw for default/i: returned Infinity, not a finite delay in ms',
      ]);
    });
  });

  it('a fault around a reconcile, outside the user function, is reported on errors$ and the key retried', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a')) }));
      // Its cache is not there when the first reconcile starts (cacheOf throws), then comes.
      const store$ = new Subject<Store<KubeObject>>();
      scheduler.schedule(() => widgets.store$.pipe(take(1)).subscribe(store$), 3);
      const reconciled: string[] = [];
      const ctl = controller({
        for: { ...widgets, store$ },
        scheduler,
        reconcile: (key) => void reconciled.push(`${key}@${scheduler.now()}`),
      });
      const errors: string[] = [];
      ctl.errors$.subscribe((e) => errors.push(`${e.reason} ${e.key ?? '-'}@${scheduler.now()}`));
      ctl.outcomes$.subscribe();
      scheduler.flush();
      expect(errors).toEqual(['Unknown default/a@0']);
      expect(reconciled).toEqual(['default/a@5']);
    });
  });

  it('requeueAfter looks again after the delay; a TerminalError is not retried', () => {
    run(({ cold, expectObservable }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a'), kubeObj('t')) }));
      let aRuns = 0;
      const ctl = controller({
        for: widgets,
        scheduler,
        reconcile: (key) => {
          if (key === 'default/t') throw new TerminalError('bad spec');
          return ++aRuns < 3 ? requeueAfter(50) : done();
        },
      });
      expectObservable(ctl.outcomes$.pipe(map(brief)), '^ 500ms !').toBe('(at) 46ms a 49ms b', {
        a: 'default/a:requeueAfter',
        t: 'default/t:terminal',
        b: 'default/a:success',
      });
    });
  });

  it('requeueAfter with a delay ≤ 0 is a rate-limited requeue, and one that is not a finite number an error outcome, retried rate-limited (no spin)', () => {
    const results: Record<string, ReconcileResult> = {
      zero: requeueAfter(0),
      negative: requeueAfter(-5),
      nan: requeueAfter(Number.NaN),
      infinite: requeueAfter(Number.POSITIVE_INFINITY),
      missing: { type: 'requeueAfter' } as unknown as ReconcileResult,
    };
    const seen: Record<string, string[]> = {};
    for (const [name, result] of Object.entries(results)) {
      run(({ cold }, scheduler) => {
        const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a')) }));
        const ctl = controller({ for: widgets, scheduler, reconcile: () => result });
        const outcomes: string[] = [];
        ctl.outcomes$.pipe(take(4)).subscribe((o) => {
          const error = o.result === 'error' && o.error instanceof InformerError ? ` ${o.error.reason}: ${o.error.message}` : '';
          outcomes.push(`${scheduler.now()} ${o.result}${error}`);
        });
        scheduler.flush();
        seen[name] = outcomes;
        expect(ctl.metrics().reconcileTotal.requeue_after).toBe(0);
      });
    }
    // The default limiter's per-key backoff: 5 ms, 10 ms, 20 ms.
    const requeues = ['0 requeue', '5 requeue', '15 requeue', '35 requeue'];
    const errors = (shown: string) =>
      [0, 5, 15, 35].map(
        (at) =>
          `${at} error HandlerError: controller widget: reconcile of default/a returned requeueAfter(${shown}): the delay must be a finite number of milliseconds`,
      );
    expect(seen).toEqual({
      zero: requeues,
      negative: requeues,
      nan: errors('NaN'),
      infinite: errors('Infinity'),
      missing: errors('undefined'),
    });
  });

  it('a requeueAfter(0) or failing reconcile ends when stopped: the run finishes', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a'), kubeObj('b')) }));
      let runs = 0;
      // A safety valve, so that a spin fails this test instead of hanging the run: after 50 runs, done.
      const reconcile = (key: string) => (++runs > 50 ? done() : key === 'default/a' ? requeueAfter(0) : requeueAfter(Number.NaN));
      const ctl = controller({ for: widgets, scheduler, reconcile });
      let outcomes = 0;
      let completed = false;
      ctl.outcomes$.subscribe({ next: () => outcomes++, complete: () => (completed = true) });
      scheduler.schedule(() => void ctl.stop().subscribe(), 100);
      scheduler.flush();
      expect(completed).toBe(true);
      // a and b at 0, 5, 15, 35, 75 (the next, at 155, is after the stop).
      expect(outcomes).toBe(10);
    });
  });

  it('maps owned objects to their controller owner, and watches through a map function', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('w1'), kubeObj('w2')) }));
      const owned = kubeObj('g1', { owner: { kind: 'Widget', name: 'w1', apiVersion: 'example.com/v1' }, resourceVersion: '5' });
      const gadgets = fakeInformer(
        Gadgets,
        cold('l---m', { l: listed('1'), m: modified({ ...owned, metadata: { ...owned.metadata, resourceVersion: '6' } }) }),
      );
      const others = fakeInformer(
        fakeResource({ plural: 'others', kind: 'Other' }),
        cold('l------a', { l: listed('1'), a: added(kubeObj('o', { labels: { for: 'w2' } })) }),
      );
      const ctl = controller({
        for: widgets,
        owns: [gadgets],
        watches: [{ informer: others, map: (o) => [`default/${o.metadata.labels?.['for']}`] }],
        scheduler,
        reconcile: () => done(),
      });
      const outcomes: string[] = [];
      ctl.outcomes$.subscribe((o) => outcomes.push(`${brief(o)}@${scheduler.now()}`));
      scheduler.flush();
      // both listed at 0; the owned gadget changed at 4 → its owner w1; the watched object added at 7 → w2
      expect(outcomes).toEqual(['default/w1:success@0', 'default/w2:success@0', 'default/w1:success@4', 'default/w2:success@7']);
    });
  });

  it('applies the predicate to the primary resource (status-only updates dropped), deletions still reconcile', () => {
    run(({ cold, expectObservable }, scheduler) => {
      const v1 = kubeObj('a', { generation: 1, resourceVersion: '1' });
      const statusOnly = kubeObj('a', { generation: 1, resourceVersion: '2', status: { ok: true } });
      const specChange = kubeObj('a', { generation: 2, resourceVersion: '3' });
      const widgets = fakeInformer(
        Widgets,
        cold('l-s-g-d', { l: listed('1', v1), s: modified(statusOnly), g: modified(specChange), d: deleted(specChange) }),
      );
      const seen: (string | undefined)[] = [];
      const ctl = controller({
        for: widgets,
        predicate: generationChanged(),
        scheduler,
        reconcile: (_key, { object }) => {
          seen.push(object?.metadata.resourceVersion);
          return done();
        },
      });
      expectObservable(ctl.outcomes$.pipe(map(brief)), '^ 20ms !').toBe('a---a-a', { a: 'default/a:success' });
      scheduler.flush();
      expect(seen).toEqual(['1', '3', undefined]);
    });
  });

  it('stop() drains in-flight reconciles, then completes the outcomes', () => {
    run(({ cold, hot, expectObservable }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a')) }));
      const ctl = controller({ for: widgets, scheduler, reconcile: () => timer(10).pipe(map(() => done())) });
      hot('---s').subscribe(() => ctl.stop().subscribe());
      expectObservable(ctl.outcomes$.pipe(map(brief))).toBe('----------(a|)', { a: 'default/a:success' });
    });
  });

  it('stop() takes no queued key: the queued keys never start, stop() and the outcomes end with the in-flight one', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(Widgets, cold('l', { l: listed('1', kubeObj('a'), kubeObj('b'), kubeObj('c')) }));
      const started: string[] = [];
      const ctl = controller({
        for: widgets,
        scheduler,
        reconcile: (key) => {
          started.push(`${key}@${scheduler.now()}`);
          return timer(10).pipe(map(() => done()));
        },
      });
      let completedAt: number | undefined;
      ctl.outcomes$.subscribe({ complete: () => (completedAt = scheduler.now()) });
      let stoppedAt: number | undefined;
      scheduler.schedule(() => void ctl.stop().subscribe(() => (stoppedAt = scheduler.now())), 5);
      scheduler.flush();
      // a runs 0–10; b and c, queued behind it, never start (not after stop() said it had drained, either)
      expect(started).toEqual(['default/a@0']);
      expect(stoppedAt).toBe(10);
      expect(completedAt).toBe(10);
      // they are left in the shut-down queue, not reconciled
      expect(ctl.queue.length).toBe(2);
    });
  });

  it('stop() before the inputs have synced: nothing is reconciled, and stop() and the outcomes end at once', () => {
    run(({ cold }, scheduler) => {
      // the list comes at frame 20, after stop() at 5: the cache never synced while the controller ran
      const widgets = fakeInformer(Widgets, cold('20ms l', { l: listed('1', kubeObj('a')) }));
      const started: string[] = [];
      const ctl = controller({ for: widgets, scheduler, reconcile: (key) => void started.push(key) });
      let completedAt: number | undefined;
      ctl.outcomes$.subscribe({ complete: () => (completedAt = scheduler.now()) });
      let stoppedAt: number | undefined;
      scheduler.schedule(() => void ctl.stop().subscribe(() => (stoppedAt = scheduler.now())), 5);
      scheduler.flush();
      expect(started).toEqual([]);
      expect(stoppedAt).toBe(5);
      expect(completedAt).toBe(5);
    });
  });

  it('the active-worker gauge returns to 0 when outcomes$ is unsubscribed mid-reconcile', () => {
    run((_, scheduler) => {
      const widgets = fakeInformer(Widgets, cold0(scheduler));
      const ctl = controller({ for: widgets, scheduler, concurrency: 2, reconcile: () => timer(100).pipe(map(() => done())) });
      const subscription = ctl.outcomes$.subscribe();
      scheduler.schedule(() => expect(ctl.metrics().activeWorkers).toBe(2), 10);
      scheduler.schedule(() => subscription.unsubscribe(), 20);
      scheduler.flush();
      expect(ctl.metrics().activeWorkers).toBe(0);
      expect(ctl.metrics().reconcileTimeSeconds.count).toBe(0);
    });
  });
});

function cold0(scheduler: TestScheduler) {
  return scheduler.createColdObservable('l', { l: listed('1', kubeObj('a'), kubeObj('b')) });
}
