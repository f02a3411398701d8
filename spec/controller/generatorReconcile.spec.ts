/**
 * A reconcile written as a generator (`function*`, `async function*`) returns an iterator whose body runs only when
 * iterated: it is the reconcile's work, run through `from()` and its last result taken, as an `on()` handler's is
 * (util/isWork.ts). Before, it was taken as the result itself and its body never ran, silently.
 */
import { NEVER, concat, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { controller, done, requeueAfter } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';
import type { ReconcileOutcome } from '../../src/controller/reconcile.ts';

const widgets = () => fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'), kubeObj('b'))), NEVER));

describe('controller: a generator reconcile is run', () => {
  it('function*: its body runs for each key and its last result decides the outcome', () => {
    const ran: string[] = [];
    const outcomes: ReconcileOutcome[] = [];
    const ctl = controller({
      for: widgets(),
      reconcile: function* (key) {
        ran.push(key);
        yield requeueAfter(60_000);
        yield done();
      },
    });
    const subscription = ctl.outcomes$.subscribe((o) => outcomes.push(o));
    expect(ran.sort()).toEqual(['default/a', 'default/b']);
    expect(outcomes.map((o) => [o.key, o.result]).sort()).toEqual([
      ['default/a', 'success'],
      ['default/b', 'success'],
    ]);
    subscription.unsubscribe();
  });

  it('async function*: its body runs, awaited, and its last result decides the outcome', async () => {
    const ran: string[] = [];
    const outcomes: ReconcileOutcome[] = [];
    const ctl = controller({
      for: widgets(),
      reconcile: async function* (key) {
        await Promise.resolve();
        ran.push(key);
        yield done();
      },
    });
    const subscription = ctl.outcomes$.subscribe((o) => outcomes.push(o));
    for (let i = 0; i < 50 && outcomes.length < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(ran.sort()).toEqual(['default/a', 'default/b']);
    expect(outcomes.map((o) => o.result)).toEqual(['success', 'success']);
    subscription.unsubscribe();
  });
});
