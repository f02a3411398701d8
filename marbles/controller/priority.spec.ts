import { describe, expect, it } from 'vitest';
import type { TestScheduler } from 'rxjs/testing';
import { testScheduler } from '../support/testScheduler.ts';
import { map, throwError, timer } from 'rxjs';
import { controller, done, requeueAfter, type ReconcileOutcome } from '../../src/controller/index.ts';
import { itemExponentialFailureRateLimiter, LOW_PRIORITY } from '../../src/workqueue/index.ts';
import { added, deleted, fakeInformer, fakeResource, kubeObj, listed, modified } from '../../src/testing/marbles.ts';

const Widgets = fakeResource();
const Gadgets = fakeResource({ plural: 'gadgets', kind: 'Gadget' });
const brief = (o: ReconcileOutcome) => o.key.replace('default/', '');

function run(body: (helpers: Parameters<Parameters<TestScheduler['run']>[0]>[0], scheduler: TestScheduler) => void) {
  const scheduler = testScheduler();
  scheduler.run((helpers) => body(helpers, scheduler));
}

const names = ['a', 'b', 'c', 'd', 'e'];

describe('controller priorities (virtual time)', () => {
  it('a real change overtakes the initial-list backlog; without lowPriorityWhenUnchanged it waits its turn', () => {
    for (const lowPriorityWhenUnchanged of [true, false]) {
      run(({ cold, expectObservable }, scheduler) => {
        // the list at 0 queues a..e; e changes at 1 and a new object n appears at 2, while a runs (0..3)
        const widgets = fakeInformer(
          Widgets,
          cold('lmn', {
            l: listed('1', ...names.map((n) => kubeObj(n))),
            m: modified(kubeObj('e', { resourceVersion: '2' })),
            n: added(kubeObj('n', { resourceVersion: '3' })),
          }),
        );
        const ctl = controller({ for: widgets, scheduler, lowPriorityWhenUnchanged, reconcile: () => timer(3).pipe(map(() => done())) });
        const priorities: number[] = [];
        ctl.queue.metrics$.subscribe((e) => e.type === 'get' && priorities.push(e.priority));
        expectObservable(ctl.outcomes$.pipe(map(brief)), '^ 30ms !').toBe(
          lowPriorityWhenUnchanged ? '3ms a 2ms e 2ms n 2ms b 2ms c 2ms d' : '3ms a 2ms b 2ms c 2ms d 2ms e 2ms n',
        );
        scheduler.flush();
        expect(priorities).toEqual(lowPriorityWhenUnchanged ? [-100, 0, 0, -100, -100, -100] : [0, 0, 0, 0, 0, 0]);
      });
    }
  });

  it('resync events go in at low priority, and so do the keys they reach through owns and watches; deletions do not', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(
        Widgets,
        cold('l 99ms d', { l: listed('1', kubeObj('a'), kubeObj('b'), kubeObj('c')), d: deleted(kubeObj('c')) }),
        {
          resyncPeriod: 50,
          scheduler,
        },
      );
      const gadget = kubeObj('g', { owner: { kind: 'Widget', name: 'b', apiVersion: 'example.com/v1' }, resourceVersion: '5' });
      const gadgets = fakeInformer(
        Gadgets,
        cold('l 59ms m', { l: listed('1', gadget), m: modified({ ...gadget, metadata: { ...gadget.metadata, resourceVersion: '6' } }) }),
        {
          resyncPeriod: 50,
          scheduler,
        },
      );
      const adds: string[] = [];
      const ctl = controller({ for: widgets, owns: [gadgets], scheduler, reconcile: () => done() });
      ctl.queue.metrics$.subscribe((e) => {
        if (e.type === 'add') adds.push(`${scheduler.now()}:${e.item.replace('default/', '')}@${e.priority}`);
        if (e.type === 'raise') adds.push(`${scheduler.now()}:${e.item.replace('default/', '')}^${e.to}`);
      });
      const subscription = ctl.outcomes$.subscribe();
      scheduler.schedule(() => subscription.unsubscribe(), 120);
      scheduler.flush();
      // Each key runs at once (instant reconciles), so nothing is deduplicated; sorted within a frame.
      expect(adds.sort((x, y) => Number(x.split(':')[0]) - Number(y.split(':')[0]) || x.localeCompare(y))).toEqual([
        // the initial lists (the gadget's list queues its owner b again before reconciles start: deduplicated)
        '0:a@-100',
        '0:b@-100',
        '0:c@-100',
        // resync at 50: every widget, and the gadget's owner b
        '50:a@-100',
        '50:b@-100',
        '50:b@-100',
        '50:c@-100',
        // the gadget really changed at 60: its owner at the default priority
        '60:b@0',
        // the deletion at 100: default priority; the resync at 100 covers a and b (and the gadget's owner b)
        '100:a@-100',
        '100:b@-100',
        '100:b@-100',
        '100:c@0',
      ]);
    });
  });

  it('a failed or requeued-after key is queued again at the priority it ran at (context.priority)', () => {
    run(({ cold }, scheduler) => {
      const widgets = fakeInformer(
        Widgets,
        cold('l-m', { l: listed('1', kubeObj('a'), kubeObj('b')), m: modified(kubeObj('b', { resourceVersion: '2' })) }),
      );
      const runs: string[] = [];
      let aRuns = 0;
      let bRuns = 0;
      const ctl = controller({
        for: widgets,
        scheduler,
        rateLimiter: itemExponentialFailureRateLimiter<string>(10, 1000),
        reconcile: (key, context) => {
          runs.push(`${scheduler.now()}:${key.replace('default/', '')}@${context.priority}`);
          if (key === 'default/a') return ++aRuns === 1 ? throwError(() => new Error('boom')) : done();
          return ++bRuns === 2 ? requeueAfter(5) : done();
        },
      });
      const retries: string[] = [];
      ctl.queue.metrics$.subscribe(
        (e) => e.type === 'add' && scheduler.now() > 2 && retries.push(`${scheduler.now()}:${e.item}@${e.priority}`),
      );
      ctl.outcomes$.subscribe();
      scheduler.flush();
      expect(runs).toEqual(['0:a@-100', '0:b@-100', '2:b@0', '7:b@0', '10:a@-100']);
      expect(retries).toEqual(['7:default/b@0', '10:default/a@-100']);
      expect(LOW_PRIORITY).toBe(-100);
    });
  });
});
