import { NEVER } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { controller, done } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource } from '../../src/testing/marbles.ts';

describe('controller options are checked when controller() is called', () => {
  it.each([Number(undefined), 0, -1, 1.5, Infinity, '2' as unknown as number])(
    'concurrency %s: a TypeError naming the controller and the option',
    (concurrency) => {
      const widgets = fakeInformer(fakeResource(), NEVER);
      expect(() => controller({ for: widgets, concurrency, reconcile: () => done() })).toThrow(
        new TypeError(
          `controller widget: \`concurrency\` must be a positive integer (keys reconciled at once), got ${String(concurrency)}`,
        ),
      );
      expect(() => controller({ name: 'apples', for: widgets, concurrency, reconcile: () => done() })).toThrow(
        /^controller apples: `concurrency`/,
      );
    },
  );

  it('a positive integer, or none, is taken', () => {
    const widgets = fakeInformer(fakeResource(), NEVER);
    expect(controller({ for: widgets, concurrency: 3, reconcile: () => done() }).metrics().maxConcurrentReconciles).toBe(3);
    expect(controller({ for: widgets, reconcile: () => done() }).metrics().maxConcurrentReconciles).toBe(1);
  });
});
