/**
 * A trace writer's rules (src/1-transport/trace/writerStep.ts), row by row: a state, an input, the
 * effects in order and the next state. The rules are listed in the module's JSDoc; the shell
 * (`traceWriter`) is tested by marbles/1-transport/trace/record.spec.ts and traceFileSink.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TRACE_REQUESTS } from '../../../src/1-transport/trace/format.ts';
import {
  initialWriter,
  MAX_LINE_SIZE,
  STOP_LINE_ROOM,
  writerStep,
  type WriterEffect,
  type WriterInput,
  type WriterLimits,
  type WriterState,
} from '../../../src/1-transport/trace/writerStep.ts';

const writing: WriterState = initialWriter(100);
const stopped = (why: WriterState['stopped'], fields: Partial<WriterState> = {}): WriterState => ({ ...writing, stopped: why, ...fields });
const unlimited: WriterLimits = { maxBytes: Infinity, durationMs: undefined };
const stopping = (why: NonNullable<WriterState['stopped']>, at: number): WriterEffect[] => [
  { type: 'freeTimer' },
  { type: 'stopLine', at, why },
  { type: 'stopped', why },
];

interface Row {
  readonly rule: string;
  readonly from: WriterState;
  readonly input: WriterInput;
  readonly limits?: WriterLimits;
  readonly effects: readonly WriterEffect[];
  readonly then: WriterState;
}

const ROWS: readonly Row[] = [
  {
    rule: 'a line while it writes: written',
    from: writing,
    input: { type: 'line', at: 5, size: 50 },
    effects: [{ type: 'write' }],
    then: writing,
  },
  {
    rule: 'written: its bytes count',
    from: writing,
    input: { type: 'written', size: 50 },
    effects: [],
    then: { ...writing, bytes: 150 },
  },
  {
    rule: 'a line once stopped: refused',
    from: stopped('maxBytes'),
    input: { type: 'line', at: 5, size: 1 },
    effects: [],
    then: stopped('maxBytes'),
  },
  {
    rule: 'a line at durationMs: not written, the writer stops (duration), the stop line stamped at the line’s time',
    from: writing,
    input: { type: 'line', at: 1000, size: 1 },
    limits: { maxBytes: Infinity, durationMs: 1000 },
    effects: stopping('duration', 1000),
    then: stopped('duration'),
  },
  {
    rule: 'a line just before durationMs: written',
    from: writing,
    input: { type: 'line', at: 999, size: 1 },
    limits: { maxBytes: Infinity, durationMs: 1000 },
    effects: [{ type: 'write' }],
    then: writing,
  },
  {
    rule: 'a line that leaves exactly the stop line’s room: written',
    from: writing,
    input: { type: 'line', at: 5, size: 100 },
    limits: { maxBytes: 200 + STOP_LINE_ROOM, durationMs: undefined },
    effects: [{ type: 'write' }],
    then: writing,
  },
  {
    rule: 'a line that would leave less than the stop line’s room: not written, the writer stops (maxBytes)',
    from: writing,
    input: { type: 'line', at: 5, size: 101 },
    limits: { maxBytes: 200 + STOP_LINE_ROOM, durationMs: undefined },
    effects: stopping('maxBytes', 5),
    then: stopped('maxBytes'),
  },
  {
    rule: 'a line of MAX_LINE_SIZE bytes (the longest a reader reads, its newline included): written',
    from: writing,
    input: { type: 'line', at: 5, size: MAX_LINE_SIZE },
    effects: [{ type: 'write' }],
    then: writing,
  },
  {
    rule: 'a line longer than a reader reads (a 64 MiB page): not written, the writer stops (maxBytes), so the file reads',
    from: writing,
    input: { type: 'line', at: 5, size: MAX_LINE_SIZE + 1 },
    effects: stopping('maxBytes', 5),
    then: stopped('maxBytes', { refusedLineBytes: MAX_LINE_SIZE + 1 }),
  },
  {
    rule: 'a line both over maxBytes and longer than a reader reads: stops (maxBytes), said to be the line’s length',
    from: writing,
    input: { type: 'line', at: 5, size: MAX_LINE_SIZE + 1, request: true },
    limits: { maxBytes: 1000, durationMs: undefined, maxRequests: 0 },
    effects: stopping('maxBytes', 5),
    then: stopped('maxBytes', { refusedLineBytes: MAX_LINE_SIZE + 1 }),
  },
  {
    rule: 'a request’s line over maxBytes at the request cap: stops (maxBytes), said to be the cap',
    from: { ...writing, requests: 3 },
    input: { type: 'line', at: 5, size: 2000, request: true },
    limits: { maxBytes: 1000, durationMs: undefined, maxRequests: 3 },
    effects: stopping('maxBytes', 5),
    then: stopped('maxBytes', { requests: 3, refusedRequests: 3 }),
  },
  {
    rule: 'written, a request’s line (list, watch): it counts',
    from: writing,
    input: { type: 'written', size: 50, request: true },
    effects: [],
    then: { ...writing, bytes: 150, requests: 1 },
  },
  {
    rule: 'a request’s line past MAX_TRACE_REQUESTS (by default): not written, the writer stops (maxBytes), so the file reads',
    from: { ...writing, requests: MAX_TRACE_REQUESTS },
    input: { type: 'line', at: 5, size: 10, request: true },
    effects: stopping('maxBytes', 5),
    then: stopped('maxBytes', { requests: MAX_TRACE_REQUESTS, refusedRequests: MAX_TRACE_REQUESTS }),
  },
  {
    rule: 'the last request a reader reads (the MAX_TRACE_REQUESTS-th): written',
    from: { ...writing, requests: MAX_TRACE_REQUESTS - 1 },
    input: { type: 'line', at: 5, size: 10, request: true },
    effects: [{ type: 'write' }],
    then: { ...writing, requests: MAX_TRACE_REQUESTS - 1 },
  },
  {
    rule: 'at the request cap, a line of an open request (an event): written',
    from: { ...writing, requests: 2 },
    input: { type: 'line', at: 5, size: 10 },
    limits: { maxBytes: Infinity, durationMs: undefined, maxRequests: 2 },
    effects: [{ type: 'write' }],
    then: { ...writing, requests: 2 },
  },
  {
    rule: 'the duration is checked before the budget',
    from: writing,
    input: { type: 'line', at: 1000, size: 1000 },
    limits: { maxBytes: 200, durationMs: 1000 },
    effects: stopping('duration', 1000),
    then: stopped('duration'),
  },
  {
    rule: 'failed (a write threw): the writer stops (closed), no stop line',
    from: writing,
    input: { type: 'failed' },
    effects: [{ type: 'freeTimer' }, { type: 'stopped', why: 'closed' }],
    then: stopped('closed', { failed: true }),
  },
  {
    rule: 'failed as the stop line was written: only marked failed',
    from: stopped('maxBytes'),
    input: { type: 'failed' },
    effects: [],
    then: stopped('maxBytes', { failed: true }),
  },
  {
    rule: 'due (the duration’s timer): the writer stops (duration)',
    from: writing,
    input: { type: 'due', at: 1000 },
    effects: stopping('duration', 1000),
    then: stopped('duration'),
  },
  {
    rule: 'close: the writer stops (closed)',
    from: writing,
    input: { type: 'close', at: 7 },
    effects: stopping('closed', 7),
    then: stopped('closed'),
  },
  {
    rule: 'close once stopped: nothing (the first reason stands)',
    from: stopped('duration'),
    input: { type: 'close', at: 7 },
    effects: [],
    then: stopped('duration'),
  },
  {
    rule: 'due once stopped: nothing',
    from: stopped('closed'),
    input: { type: 'due', at: 1000 },
    effects: [],
    then: stopped('closed'),
  },
];

describe('writerStep: the rules, row by row', () => {
  for (const row of ROWS) {
    it(row.rule, () => {
      const step = writerStep(row.from, row.input, row.limits ?? unlimited);
      expect(step.effects).toEqual(row.effects);
      expect(step.state).toEqual(row.then);
    });
  }

  it('starts writing, its header counted', () => {
    expect(initialWriter(42)).toEqual({ bytes: 42, stopped: undefined, failed: false, requests: 0 });
  });
});
