/**
 * A controller's faults (a predicate, a `watches` map, a `keyFilter` or a rate limiter that throws; a fault around a
 * reconcile) while nothing subscribes to its `errors$` are reported as an informer's are (src/5-informer/unobservedErrors.ts,
 * the one home): `process.emitWarning`, type `RxInformerWarning`, the reason as `code`, rate limited per reason; none
 * while `errors$` has a subscriber, none with `reportUnobservedErrors: false`. A reconcile's error is an outcome, not
 * a warning. At the default options, in virtual time.
 */
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { testScheduler } from '../../marbles/support/testScheduler.ts';
import { controller, type ControllerOptions } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource, kubeObj, listed, modified } from '../../src/testing/marbles.ts';
import type { KubeObject } from '../../src/0-model/objects.ts';
import { warningsOf } from '../support/warnings.ts';

const Widgets = fakeResource();
const MINUTE = 60_000;

describe('a controller reports the faults nobody observes on its errors$', () => {
  let warn: MockInstance<typeof process.emitWarning>;
  beforeEach(() => {
    warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());
  /** What was warned: [message, type, code]. */
  const warnings = () => warningsOf(warn);

  /**
   * A widget controller whose predicate throws for every `boom` (listed at 0, modified at 4 and 6 minutes), whose
   * reconcile fails for `a`; `observe` subscribes to errors$ for the whole run.
   */
  function runs(options: Partial<ControllerOptions<KubeObject>> = {}, observe = false): string[] {
    const scheduler = testScheduler();
    const seen: string[] = [];
    scheduler.run(({ cold }) => {
      const events = cold(`l ${4 * MINUTE - 1}ms m ${2 * MINUTE - 1}ms n`, {
        l: listed('1', kubeObj('a'), kubeObj('boom')),
        m: modified(kubeObj('boom', { resourceVersion: '2' })),
        n: modified(kubeObj('boom', { resourceVersion: '3' })),
      });
      const ctl = controller({
        for: fakeInformer(Widgets, events),
        predicate: (e) => {
          if (e.object.metadata.name === 'boom') throw new Error('predicate bug');
          return true;
        },
        reconcile: (key) => {
          if (key === 'default/a') throw new Error('reconcile failed');
        },
        scheduler,
        ...options,
      });
      if (observe) ctl.errors$.subscribe((e) => seen.push(e.reason));
      const running = ctl.outcomes$.subscribe();
      scheduler.schedule(() => running.unsubscribe(), 7 * MINUTE);
    });
    return seen;
  }

  it('a throwing predicate, nobody on errors$: one warning; again within 5 minutes: none; after: one, counting what was left out', () => {
    runs();
    expect(warnings()).toEqual([
      ['controller widget: HandlerError: predicate threw for default/boom: predicate bug', 'RxInformerWarning', 'HandlerError'],
      [
        'controller widget: HandlerError: predicate threw for default/boom: predicate bug; 1 more HandlerError since the last report',
        'RxInformerWarning',
        'HandlerError',
      ],
    ]);
  });

  it('none while errors$ has a subscriber, and none with reportUnobservedErrors: false', () => {
    expect(runs({}, true)).toEqual(['HandlerError', 'HandlerError', 'HandlerError']);
    runs({ reportUnobservedErrors: false });
    expect(warn).not.toHaveBeenCalled();
  });
});
