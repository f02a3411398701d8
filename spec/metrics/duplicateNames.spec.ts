import { NEVER } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { controller, done } from '../../src/controller/index.ts';
import { controllerFamilies, toPrometheusText, workqueueFamilies } from '../../src/metrics/index.ts';
import { fakeInformer, fakeResource } from '../../src/testing/marbles.ts';
import { warningsOf } from '../support/warnings.ts';

describe('metrics of two controllers of one name (controller-runtime refuses a duplicate name)', () => {
  let warn: MockInstance<typeof process.emitWarning>;
  beforeEach(() => {
    warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => {
    warn.mockRestore();
  });

  it('two controllers of one kind, both named by default: one warning naming them, once; the text says what it left out', () => {
    const gadgets = fakeInformer(fakeResource({ plural: 'gadgets', kind: 'Gadget' }), NEVER);
    const first = controller({ for: gadgets, reconcile: () => done() });
    const second = controller({ for: gadgets, reconcile: () => done() });
    expect([first.name, second.name]).toEqual(['gadget', 'gadget']);
    const families = () => [
      ...controllerFamilies([first.metrics(), second.metrics()]),
      ...workqueueFamilies([first.queue.metrics(), second.queue.metrics()]),
    ];
    const text = toPrometheusText(families());
    expect(text).toMatch(/^# left out 1 repeated series of controller_runtime_active_workers$/m);
    const message = (what: string) =>
      `metrics: 2 ${what} are named "gadget": they share one set of series, and only the first's is exported; ` +
      'give each controller its own `name` (the default is its kind, lower-cased)';
    expect(warningsOf(warn)).toEqual([
      [message('controllers'), 'RxInformerWarning', 'DuplicateName'],
      [message('work queues'), 'RxInformerWarning', 'DuplicateName'],
    ]);
    toPrometheusText(families()); // every scrape: no second warning
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('controllers of one kind given their own names: no warning, every series exported', () => {
    const sprockets = fakeInformer(fakeResource({ plural: 'sprockets', kind: 'Sprocket' }), NEVER);
    const first = controller({ name: 'sprocket-scaler', for: sprockets, reconcile: () => done() });
    const second = controller({ name: 'sprocket-pruner', for: sprockets, reconcile: () => done() });
    const text = toPrometheusText([
      ...controllerFamilies([first.metrics(), second.metrics()]),
      ...workqueueFamilies([first.queue.metrics(), second.queue.metrics()]),
    ]);
    expect(text).not.toMatch(/left out/);
    expect(warn).not.toHaveBeenCalled();
  });
});
