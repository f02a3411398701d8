/**
 * controller()'s metrics are a pure fold of its outcomes (`countOutcome`): each row is one of controller-runtime's
 * rules for which counters a reconcile's result moves.
 */
import { describe, expect, it } from 'vitest';
import { countOutcome } from '../../src/controller/controller.ts';
import { TerminalError, type ReconcileOutcome } from '../../src/controller/reconcile.ts';

const none = {
  reconcileTotal: { success: 0, error: 0, requeue: 0, requeue_after: 0 },
  reconcileErrorsTotal: 0,
  terminalReconcileErrorsTotal: 0,
  reconcileTimeSeconds: { count: 0, sumSeconds: 0 },
};

const rows: readonly [
  string,
  ReconcileOutcome,
  Partial<Record<'success' | 'error' | 'requeue' | 'requeue_after', number>>,
  number,
  number,
][] = [
  // name, outcome, reconcile_total by label, errors_total, terminal_errors_total
  ['success', { key: 'a', result: 'success', durationMs: 1500 }, { success: 1 }, 0, 0],
  ['requeue', { key: 'a', result: 'requeue', durationMs: 1500 }, { requeue: 1 }, 0, 0],
  ['requeueAfter', { key: 'a', result: 'requeueAfter', delayMs: 10, durationMs: 1500 }, { requeue_after: 1 }, 0, 0],
  ['error', { key: 'a', result: 'error', error: new Error('x'), requeues: 1, durationMs: 1500 }, { error: 1 }, 1, 0],
  ['terminal', { key: 'a', result: 'terminal', error: new TerminalError('x'), durationMs: 1500 }, { error: 1 }, 1, 1],
];

describe('countOutcome', () => {
  it.each(rows)('%s moves its counters and the reconcile time', (_, outcome, totals, errors, terminal) => {
    const counts = countOutcome(none, outcome);
    expect(counts.reconcileTotal).toEqual({ ...none.reconcileTotal, ...totals });
    expect(counts.reconcileErrorsTotal).toBe(errors);
    expect(counts.terminalReconcileErrorsTotal).toBe(terminal);
    expect(counts.reconcileTimeSeconds).toEqual({ count: 1, sumSeconds: 1.5 });
  });

  it('never changes the counts it is given (published metrics stay as they were read)', () => {
    const before = structuredClone(none);
    countOutcome(none, rows[3]![1]);
    expect(none).toEqual(before);
  });
});
