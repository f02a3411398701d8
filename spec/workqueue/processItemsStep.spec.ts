/**
 * processItems' rules (src/workqueue/processItemsStep.ts), row by row: the slots' machine and a
 * run's, each a state, an input, the effects in order and the next state. The rules are listed in
 * the module's JSDoc; the shell is tested through `WorkQueue.process` (spec/workqueue, marbles/workqueue).
 */
import { describe, expect, it } from 'vitest';
import {
  initialSlots,
  runStep,
  slotStep,
  startRun,
  type RunEffect,
  type RunInput,
  type RunState,
  type SlotEffect,
  type SlotInput,
  type SlotState,
} from '../../src/workqueue/processItemsStep.ts';

describe('slotStep: the slots, row by row (concurrency 2)', () => {
  const rows: readonly {
    readonly rule: string;
    readonly from: SlotState;
    readonly input: SlotInput;
    readonly effects: readonly SlotEffect[];
    readonly then: SlotState;
  }[] = [
    {
      rule: 'pump with a free slot: it takes',
      from: initialSlots(2),
      input: { type: 'pump' },
      effects: [{ type: 'take' }],
      then: { free: 1, ended: 0 },
    },
    {
      rule: 'pump with no free slot: nothing',
      from: { free: 0, ended: 0 },
      input: { type: 'pump' },
      effects: [],
      then: { free: 0, ended: 0 },
    },
    {
      rule: 'released: the slot is free again, and the shell pumps',
      from: { free: 0, ended: 0 },
      input: { type: 'released' },
      effects: [{ type: 'pump' }],
      then: { free: 1, ended: 0 },
    },
    {
      rule: "empty: a slot's get() ended without an item; others still wait: nothing",
      from: { free: 0, ended: 0 },
      input: { type: 'empty' },
      effects: [],
      then: { free: 0, ended: 1 },
    },
    {
      rule: "empty, the last slot's: the stream completes",
      from: { free: 0, ended: 1 },
      input: { type: 'empty' },
      effects: [{ type: 'complete' }],
      then: { free: 0, ended: 2 },
    },
  ];
  for (const row of rows) {
    it(row.rule, () => {
      const step = slotStep(row.from, row.input, 2);
      expect(step.effects).toEqual(row.effects);
      expect(step.state).toEqual(row.then);
    });
  }

  it('the initial state: every slot free, pumping takes each once', () => {
    let state = initialSlots(3);
    const takes: SlotEffect[] = [];
    for (let step = slotStep(state, { type: 'pump' }, 3); step.effects.length > 0; step = slotStep(state, { type: 'pump' }, 3)) {
      state = step.state;
      takes.push(...step.effects);
    }
    expect(takes).toHaveLength(3);
  });
});

describe("runStep: a run of an item, row by row (item 'a', taken at priority 5)", () => {
  const started = startRun('a', 5);
  const completed: RunState<string> = { ...started, outcome: { type: 'done', item: 'a' } };
  const failure = new Error('boom');
  const failed: RunState<string> = { ...started, outcome: { type: 'error', item: 'a', error: { reason: 'WorkerFailed', cause: failure } } };
  const released: RunState<string> = { ...started, held: false };
  const rows: readonly {
    readonly rule: string;
    readonly from: RunState<string>;
    readonly input: RunInput<number>;
    readonly effects: readonly RunEffect<string, number>[];
    readonly then: RunState<string>;
  }[] = [
    {
      rule: 'value: emitted as it comes',
      from: started,
      input: { type: 'value', value: 1 },
      effects: [{ type: 'emit', event: { type: 'value', item: 'a', value: 1 } }],
      then: started,
    },
    {
      rule: 'completed: the outcome done is kept, nothing emitted yet',
      from: started,
      input: { type: 'completed' },
      effects: [],
      then: completed,
    },
    {
      rule: 'errored: the outcome is WorkerFailed data with the cause, kept',
      from: started,
      input: { type: 'errored', cause: failure },
      effects: [],
      then: failed,
    },
    {
      rule: 'settled after completing: done emitted, the item done, then the slot released',
      from: completed,
      input: { type: 'settled' },
      effects: [{ type: 'emit', event: { type: 'done', item: 'a' } }, { type: 'done', item: 'a' }, { type: 'release' }],
      then: released,
    },
    {
      rule: 'settled after failing: the error emitted, the item done, then the slot released',
      from: failed,
      input: { type: 'settled' },
      effects: [
        { type: 'emit', event: { type: 'error', item: 'a', error: { reason: 'WorkerFailed', cause: failure } } },
        { type: 'done', item: 'a' },
        { type: 'release' },
      ],
      then: released,
    },
    {
      rule: 'settled without an outcome (cancelled): nothing, the cancel re-queued it',
      from: released,
      input: { type: 'settled' },
      effects: [],
      then: released,
    },
    {
      rule: 'cancelled while holding the item: queued again at the priority it was taken at, then done',
      from: started,
      input: { type: 'cancelled' },
      effects: [
        { type: 'add', item: 'a', priority: 5 },
        { type: 'done', item: 'a' },
      ],
      then: released,
    },
    {
      rule: 'cancelled, taken from a queue without priorities: queued again without one',
      from: startRun('a', undefined),
      input: { type: 'cancelled' },
      effects: [
        { type: 'add', item: 'a', priority: undefined },
        { type: 'done', item: 'a' },
      ],
      then: { ...startRun('a', undefined), held: false },
    },
    {
      rule: 'cancelled after it settled (no longer holding the item): nothing',
      from: released,
      input: { type: 'cancelled' },
      effects: [],
      then: released,
    },
  ];
  for (const row of rows) {
    it(row.rule, () => {
      const step = runStep<string, number>(row.from, row.input);
      expect(step.effects).toEqual(row.effects);
      expect(step.run).toEqual(row.then);
    });
  }

  it('a run starts holding its item, with no outcome', () => {
    expect(startRun('a', 5)).toEqual({ item: 'a', priority: 5, held: true, outcome: undefined });
  });
});
