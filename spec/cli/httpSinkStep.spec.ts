/**
 * The CLI's webhook and Slack sinks' rules (src/cli/httpSinkStep.ts), row by row: a state, an input, the effects in
 * order and the next state. No timer, no socket: the shell (`HttpSink`, src/cli/sink.ts) is tested over HTTP by
 * sink.spec.ts and hostileSink.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  httpSinkStep,
  initialHttpSink,
  sinkCounts,
  type HttpSinkConfig,
  type HttpSinkEffect,
  type HttpSinkInput,
  type HttpSinkState,
} from '../../src/cli/httpSinkStep.ts';

const config: HttpSinkConfig = { label: 'webhook http://h', maxBatch: 2, maxQueueBytes: 10, reportIntervalMs: 1000 };
const NOW = 5000;
const L = config.label;

/** A state as a row writes it: items are texts (a byte a character), the rest as `HttpSinkState` says. */
interface Shown {
  readonly phase: HttpSinkState['phase'];
  readonly waiting: readonly string[];
  readonly inFlight: readonly string[];
  readonly closing: boolean;
  readonly delivered: number;
  readonly dropped: number;
  readonly rejected: number;
  readonly pendingFailures: number;
  readonly pendingDrops: number;
  readonly lastProblem: string;
  readonly quietUntil: number;
}
const base: Shown = {
  phase: 'idle',
  waiting: [],
  inFlight: [],
  closing: false,
  delivered: 0,
  dropped: 0,
  rejected: 0,
  pendingFailures: 0,
  pendingDrops: 0,
  lastProblem: '',
  quietUntil: 0,
};
const s = (fields: Partial<Shown> = {}): Shown => ({ ...base, ...fields });
const item = (text: string) => ({ text, bytes: text.length });

/** A fresh state (its queue is its own: the step mutates it) from a row's words; `bytes` counts waiting and in flight. */
function build(shown: Shown): HttpSinkState {
  const state = initialHttpSink();
  for (const text of shown.waiting) state.waiting.push(item(text));
  const { waiting: _, ...rest } = shown;
  const bytes = [...shown.waiting, ...shown.inFlight].join('').length;
  return { ...state, ...rest, inFlight: shown.inFlight.map(item), bytes };
}
function show(state: HttpSinkState): Shown & { readonly bytes: number } {
  const waiting: string[] = [];
  while (state.waiting.length > 0) waiting.push(state.waiting.shift().text);
  const { waiting: _, inFlight, ...rest } = state;
  return { ...rest, waiting, inFlight: inFlight.map((i) => i.text) };
}
function effect(e: HttpSinkEffect): string {
  switch (e.type) {
    case 'post':
      return `post ${e.items.join(',')}`;
    case 'wait':
      return `wait ${e.retryAfterMs ?? 'backoff'}`;
    case 'report':
      return `report ${e.line}`;
    case 'armCut':
      return `armCut ${e.deadline}`;
    default:
      return e.type;
  }
}

interface Row {
  readonly rule: string;
  readonly from: Shown;
  readonly input: HttpSinkInput;
  readonly effects: readonly string[];
  readonly then: Shown;
}

const posting = (inFlight: string[], fields: Partial<Shown> = {}) => s({ phase: 'posting', inFlight, ...fields });
const quiet = { quietUntil: NOW + 1 };
const fail = (problem: string, retryAfterMs?: number): HttpSinkInput => ({
  type: 'posted',
  outcome: { ok: false, permanent: false, problem, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) },
});

const ROWS: readonly Row[] = [
  // send
  {
    rule: 'send, idle: posted at once, the backoff afresh',
    from: s(),
    input: { type: 'send', item: item('aaa') },
    effects: ['resetBackoff', 'post aaa'],
    then: posting(['aaa']),
  },
  {
    rule: 'send while a batch is in flight: queued behind it, nothing done',
    from: posting(['aaa']),
    input: { type: 'send', item: item('bb') },
    effects: [],
    then: posting(['aaa'], { waiting: ['bb'] }),
  },
  {
    rule: 'send while closing: refused (not counted)',
    from: posting(['aaa'], { closing: true }),
    input: { type: 'send', item: item('bb') },
    effects: [],
    then: posting(['aaa'], { closing: true }),
  },
  {
    rule: 'send of an item past the bound on its own: dropped, the first problem told at once; nothing posted',
    from: s(),
    input: { type: 'send', item: item('x'.repeat(11)) },
    effects: [`report ${L}: 1 event dropped as the queue was full; 0 waiting`],
    then: s({ dropped: 1, quietUntil: NOW + 1000 }),
  },
  {
    rule: 'send past the bound: the oldest waiting item dropped, told with what then waits (in flight included)',
    from: posting(['aaaa'], { waiting: ['bbb'] }),
    input: { type: 'send', item: item('cccc') },
    effects: [`report ${L}: 1 event dropped as the queue was full; 2 waiting`],
    then: posting(['aaaa'], { waiting: ['cccc'], dropped: 1, quietUntil: NOW + 1000 }),
  },
  {
    rule: 'send past the bound, several dropped: the first told at once, the rest wait for the summary',
    from: posting(['aa'], { waiting: ['bb', 'cc', 'dd'] }),
    input: { type: 'send', item: item('eeeeeeee') },
    effects: [`report ${L}: 1 event dropped as the queue was full; 4 waiting`],
    then: posting(['aa'], { waiting: ['eeeeeeee'], dropped: 3, pendingDrops: 2, quietUntil: NOW + 1000 }),
  },
  {
    rule: 'send past the bound with only the batch in flight: the new item is the oldest waiting, dropped (in flight stays)',
    from: posting(['aaaaaaaa']),
    input: { type: 'send', item: item('ccc') },
    effects: [`report ${L}: 1 event dropped as the queue was full; 1 waiting`],
    then: posting(['aaaaaaaa'], { dropped: 1, quietUntil: NOW + 1000 }),
  },
  {
    rule: 'a drop in the quiet interval after a report: counted, kept for the summary',
    from: posting(['aaaaaaaa'], quiet),
    input: { type: 'send', item: item('ccc') },
    effects: [],
    then: posting(['aaaaaaaa'], { ...quiet, dropped: 1, pendingDrops: 1 }),
  },
  // posted
  {
    rule: 'a 2xx: delivered, the backoff reset, the next batch (maxBatch items) posted',
    from: posting(['a', 'b'], { waiting: ['c', 'd', 'e'] }),
    input: { type: 'posted', outcome: { ok: true } },
    effects: ['resetBackoff', 'post c,d'],
    then: posting(['c', 'd'], { waiting: ['e'], delivered: 2 }),
  },
  {
    rule: 'a 2xx with nothing waiting: idle',
    from: posting(['a']),
    input: { type: 'posted', outcome: { ok: true } },
    effects: ['resetBackoff'],
    then: s({ delivered: 1 }),
  },
  {
    rule: 'a 2xx with nothing waiting while closing: drained, so done (abort, closed)',
    from: posting(['a'], { closing: true }),
    input: { type: 'posted', outcome: { ok: true } },
    effects: ['resetBackoff', 'abort', 'closed'],
    then: s({ phase: 'closed', closing: true, delivered: 1 }),
  },
  {
    rule: 'a refusal (a 4xx, a redirect): the batch given up and told, the next one posted',
    from: posting(['a', 'b'], { waiting: ['c'] }),
    input: { type: 'posted', outcome: { ok: false, permanent: true, problem: 'HTTP 400' } },
    effects: [`report ${L}: 1 failed attempt (last: HTTP 400; 2 events given up); 1 waiting`, 'post c'],
    then: posting(['c'], { rejected: 2, lastProblem: 'HTTP 400; 2 events given up', quietUntil: NOW + 1000 }),
  },
  {
    rule: 'a failure (5xx, 408, network): told, the batch kept, a wait of the backoff',
    from: posting(['a'], { waiting: ['b'] }),
    input: fail('HTTP 500'),
    effects: [`report ${L}: 1 failed attempt (last: HTTP 500); 2 waiting`, 'wait backoff'],
    then: s({ phase: 'waiting', inFlight: ['a'], waiting: ['b'], lastProblem: 'HTTP 500', quietUntil: NOW + 1000 }),
  },
  {
    rule: "a failure with the receiver's Retry-After: that wait",
    from: posting(['a'], quiet),
    input: fail('HTTP 429', 5000),
    effects: ['wait 5000'],
    then: s({ ...quiet, phase: 'waiting', inFlight: ['a'], pendingFailures: 1, lastProblem: 'HTTP 429' }),
  },
  {
    rule: 'a POST ending after the sink closed (aborted at the deadline): ignored',
    from: s({ phase: 'closed', closing: true, inFlight: ['a'] }),
    input: { type: 'posted', outcome: { ok: true } },
    effects: [],
    then: s({ phase: 'closed', closing: true, inFlight: ['a'] }),
  },
  // waited
  {
    rule: 'the wait over: the same batch posted again, in order (not the next)',
    from: s({ phase: 'waiting', inFlight: ['a'], waiting: ['b', 'c'] }),
    input: { type: 'waited' },
    effects: ['post a'],
    then: posting(['a'], { waiting: ['b', 'c'] }),
  },
  {
    rule: 'a wait ending when not waiting: ignored',
    from: posting(['a']),
    input: { type: 'waited' },
    effects: [],
    then: posting(['a']),
  },
  // tick
  {
    rule: "the interval's tick: the problems since the last report summed up in one line",
    from: s({ ...quiet, phase: 'waiting', inFlight: ['a'], pendingFailures: 2, pendingDrops: 3, lastProblem: 'HTTP 503' }),
    input: { type: 'tick' },
    effects: [`report ${L}: 2 failed attempts (last: HTTP 503); 3 events dropped as the queue was full; 1 waiting`],
    then: s({ phase: 'waiting', inFlight: ['a'], lastProblem: 'HTTP 503', quietUntil: NOW + 1000 }),
  },
  {
    rule: "the interval's tick with nothing new: silent",
    from: s(quiet),
    input: { type: 'tick' },
    effects: [],
    then: s(quiet),
  },
  // close and cut
  {
    rule: 'close, idle: done at once (abort, the pending summary, closed)',
    from: s({ ...quiet, dropped: 1, pendingDrops: 1 }),
    input: { type: 'close', deadline: 9 },
    effects: ['abort', `report ${L}: 1 event dropped as the queue was full; 0 waiting`, 'closed'],
    then: s({ phase: 'closed', closing: true, dropped: 1, quietUntil: NOW + 1000 }),
  },
  {
    rule: 'close, busy: drains, its deadline armed',
    from: s({ phase: 'waiting', inFlight: ['a'] }),
    input: { type: 'close', deadline: 9 },
    effects: ['armCut 9'],
    then: s({ phase: 'waiting', inFlight: ['a'], closing: true }),
  },
  {
    rule: 'close again once closed: answered again',
    from: s({ phase: 'closed', closing: true }),
    input: { type: 'close', deadline: 9 },
    effects: ['closed'],
    then: s({ phase: 'closed', closing: true }),
  },
  {
    rule: 'the deadline, busy: aborted and done; what waits or is in flight stays (unsent)',
    from: posting(['a'], { closing: true, waiting: ['b'], pendingFailures: 1, lastProblem: 'HTTP 500', ...quiet }),
    input: { type: 'cut' },
    effects: ['abort', `report ${L}: 1 failed attempt (last: HTTP 500); 2 waiting`, 'closed'],
    then: s({ phase: 'closed', closing: true, inFlight: ['a'], waiting: ['b'], lastProblem: 'HTTP 500', quietUntil: NOW + 1000 }),
  },
  {
    rule: 'the deadline once closed: ignored',
    from: s({ phase: 'closed', closing: true }),
    input: { type: 'cut' },
    effects: [],
    then: s({ phase: 'closed', closing: true }),
  },
];

describe('httpSinkStep (src/cli/httpSinkStep.ts)', () => {
  it.each(ROWS)('$rule', ({ from, input, effects, then }) => {
    const step = httpSinkStep(config, build(from), input, NOW);
    expect(step.effects.map(effect)).toEqual(effects);
    expect(show(step.state)).toEqual({ ...then, bytes: [...then.waiting, ...then.inFlight].join('').length });
  });

  it('sinkCounts: what waits and what is in flight are unsent', () => {
    const state = build(s({ phase: 'posting', inFlight: ['a', 'b'], waiting: ['c'], delivered: 4, dropped: 2, rejected: 1 }));
    expect(sinkCounts(state)).toEqual({ delivered: 4, dropped: 2, rejected: 1, unsent: 3 });
  });
});
