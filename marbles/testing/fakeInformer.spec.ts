import { describe, it } from 'vitest';
import { map } from 'rxjs';
import { testScheduler } from '../support/testScheduler.ts';
import { added, deleted, fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';
import type { InformerEvent, KubeObject } from '../../src/index.ts';

const Widgets = fakeResource();
const brief = (e: InformerEvent<KubeObject>) => `${e.type} ${e.object.metadata.name}`;
const a = kubeObj('a');
const b = kubeObj('b');
const c = kubeObj('c', { resourceVersion: '2' });

describe('fakeInformer delivery (virtual time)', () => {
  // l: the first list (a, b); r: a relist after a was deleted and c created meanwhile.
  const source = { l: listed('1', a, b), r: listed('2', c, b) };

  it("delivery: 'in-order' tells a relist's missed deletion before the listed objects, as a real in-order informer", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events = cold('l-----r-----|', source);
      const widgets = fakeInformer(Widgets, events, { delivery: 'in-order' });
      expectObservable(widgets.events$.pipe(map(brief))).toBe('(xy)--(zvw)-|', {
        x: 'added a',
        y: 'added b',
        z: 'deleted a',
        v: 'added c',
        w: 'updated b',
      });
      expectSubscriptions(events.subscriptions).toBe('^-----------!');
    });
  });

  it('the default (delta-fifo) tells it after them, and both modes tell plain watch events alike', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = cold('l-----r-----m', { ...source, m: added(kubeObj('d')) });
      expectObservable(fakeInformer(Widgets, events).events$.pipe(map(brief)), '^------------!').toBe('(xy)--(vwz)-n', {
        x: 'added a',
        y: 'added b',
        v: 'added c',
        w: 'updated b',
        z: 'deleted a',
        n: 'added d',
      });
    });
  });

  it("delivery: 'in-order' keeps two DELETEDs of one key apart (the second finds nothing cached and tells nothing)", () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = cold('l----d-d', { l: listed('1', a), d: deleted(a) });
      const widgets = fakeInformer(Widgets, events, { delivery: 'in-order' });
      expectObservable(widgets.events$.pipe(map(brief)), '^-------!').toBe('x----z--', { x: 'added a', z: 'deleted a' });
      expectObservable(widgets.store$.pipe(map((store) => store.size)), '^-------!').toBe('(01)-0--', { 0: 0, 1: 1 });
    });
  });
});
