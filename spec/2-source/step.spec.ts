/**
 * The reflector's rules table in docs/semantics.md, checked row by row against
 * the pure `step` function: each row names a state and what happens, and its
 * "next" column must be what `step` decides. A failing row prints the state.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InformerError, errorFromStatus } from '../../src/0-model/errors.ts';
import { KubeObject } from '../../src/0-model/objects.ts';
import type { ListPage, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { decoder } from '../../src/2-source/decode.ts';
import { reflectorConfig, type ListAndWatchOptions } from '../../src/2-source/listAndWatch.ts';
import {
  describeState,
  initialReflectorState,
  type ReflectorEffect,
  type ReflectorInput,
  type ReflectorState,
} from '../../src/2-source/reflectorState.ts';
import { step } from '../../src/2-source/step.ts';
import { event, obj, status, tooLarge } from './reflectorFixtures.ts';

type Obj = KubeObject;
const page = (rv: string, items: Obj[], continueToken?: string): ListPage => ({
  items,
  resourceVersion: rv,
  ...(continueToken ? { continue: continueToken } : {}),
});
type Omitted = ReflectorInput extends infer I ? (I extends { id: number } ? Omit<I, 'id'> : I) : never;

/** Drives `step` the way the shell does: ids filled in, the clock given. */
class Machine {
  state: ReflectorState<Obj>;
  now = 0;
  effects: readonly ReflectorEffect<Obj>[] = [];
  private readonly config;

  constructor(options: Partial<ListAndWatchOptions<Obj>> = {}) {
    this.config = reflectorConfig<Obj>({ decode: decoder(KubeObject), ...options });
    this.state = initialReflectorState<Obj>(options.watchList ?? false);
  }

  /** The backoff's jitter draws, in turn (the shell's `random`); 0 when none is left. */
  randoms: number[] = [];

  send(input: Omitted, afterMs = 0): this {
    this.now += afterMs;
    const full = (input.type === 'start' ? input : { ...input, id: this.state.request }) as ReflectorInput;
    const result = step(this.config, this.state, full, this.now);
    this.state = result.state;
    this.effects = result.effects;
    // As the shell: a backoff's jitter is drawn and input at once; the effects are both steps'.
    const draw = result.effects.find((e) => e.type === 'drawBackoff');
    if (draw) {
      const drawn = step(this.config, this.state, { type: 'backoffDrawn', id: draw.id, random: this.randoms.shift() ?? 0 }, this.now);
      this.state = drawn.state;
      this.effects = [...result.effects, ...drawn.effects];
    }
    return this;
  }

  /** A watch from a list at rv 10 (or a streaming list with `watchList`), open. */
  open(): this {
    this.send({ type: 'start' });
    if (this.state.phase.name === 'listing') this.send({ type: 'listed', page: page('10', [obj('a', '5')]) });
    return this.send({ type: 'timeoutPicked', timeoutSeconds: 300 });
  }

  /** After a decision: the wait's timer fires, and the next watch (if any) opens. */
  next(): this {
    this.send({ type: 'timer' });
    if (this.state.phase.name === 'opening') this.send({ type: 'timeoutPicked', timeoutSeconds: 300 });
    return this;
  }

  frame(frame: WatchFrame, afterMs = 10): this {
    return this.send({ type: 'frame', frame }, afterMs);
  }
}

const fail = (m: Machine, error: unknown) => m.send({ type: 'watchFailed', error }, 10);
const network = () => new InformerError('NetworkError', 'socket hang up');
/** A connection refused: no server answered (the transport marks it `unreachable`). */
const refused = () => new InformerError('NetworkError', 'connect ECONNREFUSED 127.0.0.1:6443', { unreachable: true });
const malformed = () => new InformerError('MalformedLine', 'not JSON');
const added = (rv: string) => event('ADDED', obj('b', rv));
/** A successful list answer that passed `maxListBytes` (the transport's `ResponseTooLarge` on a 200). */
const pageTooLarge = () =>
  new InformerError('ResponseTooLarge', 'the response is larger than the 256 MiB limit', { status: 200, phase: 'list' });

/** The state each row starts from, and what happens. */
const scenarios: Record<string, () => Machine> = {
  'the server ends the watch after an event': () => new Machine().open().frame(added('11')).send({ type: 'watchEnded' }, 5000),
  'nothing arrives for `idleTimeoutMs`': () => new Machine().open().send({ type: 'check' }, 60_000),
  'events 200 ms apart, then nothing for `busyIdleTimeoutMs`': () => {
    const m = new Machine().open();
    for (let i = 0; i < 10; i++) m.frame(added(String(11 + i)), 200);
    return m.send({ type: 'check' }, 15_000);
  },
  'the server ends the watch at once with no event (`VeryShortWatch`)': () => new Machine().open().send({ type: 'watchEnded' }, 10),
  'a network error after an event': () => fail(new Machine().open().frame(added('11')), network()),
  'a network error after an event, the 3rd broken resume in a row': () => {
    const m = new Machine().open();
    for (const rv of ['11', '12']) fail(m.frame(added(rv)), network()).next();
    return fail(m.frame(added('13')), network());
  },
  'a network error before any event': () => fail(new Machine().open(), network()),
  'the connection is refused (no server answered) after an event': () => {
    const m = new Machine().open().frame(added('11'));
    return fail(fail(m, network()).next(), refused());
  },
  '429 with `Retry-After` after a refused connection': () =>
    fail(
      fail(new Machine().open(), refused()).next(),
      new InformerError('TooManyRequests', 'slow down', { status: 429, retryAfterSeconds: 7 }),
    ),
  "with `idleTimeoutMs: 0`, nothing arrives for the watch's timeout plus `stallMarginMs`": () =>
    new Machine({ idleTimeoutMs: 0 }).open().send({ type: 'check' }, 330_000),
  'a line that cannot be decoded (`MalformedLine`)': () => new Machine().open().frame(malformed()),
  'a 2nd `MalformedLine` at the same resourceVersion': () => new Machine().open().frame(malformed()).next().frame(malformed()),
  'a 3rd `MalformedLine` at the same resourceVersion': () =>
    new Machine()
      .open()
      .frame(malformed())
      .next()
      .frame(malformed())
      .next()
      .send({ type: 'listed', page: page('10', []) })
      .send({ type: 'timeoutPicked', timeoutSeconds: 300 })
      .frame(malformed()),
  'an ERROR event 410 Expired after an event': () =>
    new Machine()
      .open()
      .frame(added('11'))
      .frame(event('ERROR', status(410, 'Expired'))),
  '410 Expired on a watch from a list just received, before any event': () =>
    new Machine().open().frame(event('ERROR', status(410, 'Expired'))),
  '504 "Too large resource version"': () => new Machine().open().frame(event('ERROR', tooLarge)),
  '429 with `Retry-After`': () =>
    fail(new Machine().open(), new InformerError('TooManyRequests', 'slow down', { status: 429, retryAfterSeconds: 7 })),
  '403 Forbidden': () => fail(new Machine().open(), errorFromStatus(403, status(403, 'Forbidden'), 'watch')),
  'the server refuses the streaming-list parameters (422)': () =>
    fail(new Machine({ watchList: true }).open(), errorFromStatus(422, status(422, 'Invalid'), 'watch')),
  'the server ends the stream before the initial-events-end bookmark': () =>
    new Machine({ watchList: true }).open().frame(added('11')).send({ type: 'watchEnded' }, 5000),
  '504 "Too large resource version" before the initial-events-end bookmark': () =>
    new Machine({ watchList: true }).open().frame(event('ERROR', tooLarge)),
  'a network error before the initial-events-end bookmark': () =>
    fail(new Machine({ watchList: true }).open().frame(added('11')), network()),
  'more than `maxListObjects` initial events before the initial-events-end bookmark (`ListTooLong`)': () => {
    const m = new Machine({ watchList: true, maxListObjects: 2 }).open().frame(added('11')).frame(added('12'));
    expect(m.state.phase.name).toBe('streaming');
    m.frame(added('13'));
    expect(m.effects).toContainEqual({ type: 'emit', event: { type: 'error', error: expect.objectContaining({ reason: 'ListTooLong' }) } });
    return m;
  },
  // The transport's rule (httpTransport.ts, listBudget.ts: spec/resilience/hostile/streamingBudget.spec.ts); here what follows it.
  "the initial events pass `http.maxListTotalBytes` before the initial-events-end bookmark (the transport's `ListTooLong`)": () =>
    fail(
      new Machine({ watchList: true }).open().frame(added('11')),
      new InformerError('ListTooLong', 'the streaming list is larger than the 512 MiB limit for a whole list', { phase: 'watch' }),
    ),
  'the first page fails: the connection is refused (no server answered)': () =>
    new Machine().send({ type: 'start' }).send({ type: 'listFailed', error: refused() }),
  'a relist fails with 503 after a refused connection': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listFailed', error: refused() })
      .send({ type: 'timer' })
      .send({ type: 'listFailed', error: errorFromStatus(503, status(503, 'ServiceUnavailable'), 'list') }),
  'the first page fails with 500': () =>
    new Machine().send({ type: 'start' }).send({ type: 'listFailed', error: errorFromStatus(500, status(500, 'InternalError'), 'list') }),
  'the first page at a resourceVersion fails with 410 Expired': () =>
    new Machine().send({ type: 'start' }).send({ type: 'listFailed', error: errorFromStatus(410, status(410, 'Expired'), 'list') }),
  'a continue page fails with 410 Expired': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') })
      .send({ type: 'listFailed', error: errorFromStatus(410, status(410, 'Expired'), 'list') }),
  'a continue page of a paged list at "" (a whole list did not fit) fails with 410 Expired': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listFailed', error: pageTooLarge() })
      .send({ type: 'timer' })
      .send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') })
      .send({ type: 'listFailed', error: errorFromStatus(410, status(410, 'Expired'), 'list') }),
  'a continue page of a paged list at "" fails with 410 Expired, the 2nd in a row': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listFailed', error: pageTooLarge() })
      .send({ type: 'timer' })
      .send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') })
      .send({ type: 'listFailed', error: errorFromStatus(410, status(410, 'Expired'), 'list') })
      .send({ type: 'timer' })
      .send({ type: 'listed', page: page('20', [obj('a', '5')], 'c2') })
      .send({ type: 'listFailed', error: errorFromStatus(410, status(410, 'Expired'), 'list') }),
  'a continue page fails with 429': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') })
      .send({ type: 'listFailed', error: new InformerError('TooManyRequests', 'slow down', { status: 429, phase: 'list' }) }),
  'a continue page fails with 503 and `Retry-After`': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') })
      .send({ type: 'listFailed', error: errorFromStatus(503, status(503, 'ServiceUnavailable'), 'list', 3) }),
  'a continue page fails with 500 without `Retry-After`': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') })
      .send({ type: 'listFailed', error: errorFromStatus(500, status(500, 'InternalError'), 'list') }),
  'a continue page fails with 429 an 11th time in a row': () => {
    const m = new Machine().send({ type: 'start' }).send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') });
    const throttled = () => new InformerError('TooManyRequests', 'slow down', { status: 429, retryAfterSeconds: 1, phase: 'list' });
    for (let i = 0; i < 10; i++) m.send({ type: 'listFailed', error: throttled() }).send({ type: 'timer' });
    return m.send({ type: 'listFailed', error: throttled() });
  },
  'a list fails with 504 "Too large resource version"': () =>
    new Machine().send({ type: 'start' }).send({ type: 'listFailed', error: errorFromStatus(504, tooLarge, 'list') }),
  'the first page at "0" passes `maxListBytes` (a watch cache answers it whole, ignoring `limit`)': () =>
    new Machine().send({ type: 'start' }).send({ type: 'listFailed', error: pageTooLarge() }),
  'a relist at the last resourceVersion (asked unpaged) passes `maxListBytes`': () =>
    new Machine()
      .open()
      .frame(added('11'))
      .frame(event('ERROR', status(410, 'Expired')))
      .send({ type: 'timer' })
      .send({ type: 'listFailed', error: pageTooLarge() }),
  'a page of a paged list passes `maxListBytes`': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listFailed', error: pageTooLarge() })
      .send({ type: 'timer' })
      .send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') })
      .send({ type: 'listFailed', error: pageTooLarge() }),
  'the error body of a failed list passes `maxErrorBodyBytes`': () =>
    new Machine()
      .send({ type: 'start' })
      .send({ type: 'listFailed', error: new InformerError('ResponseTooLarge', 'error body', { status: 500, phase: 'list' }) }),
};

/** What `step` decided, in the table's words; the request after the wait is checked too. */
function decided(m: Machine, before: ReflectorState<Obj>): string {
  const { phase } = m.state;
  if (phase.name !== 'waiting') return `not waiting: ${describeState(m.state)}`;
  const wait = m.effects.find((e) => e.type === 'wait');
  const backoff = wait?.type === 'wait' && wait.backoff;
  const paged = (m.state.wholeListTooLarge && !before.wholeListTooLarge) || (m.state.wholeRelistTooLarge && !before.wholeRelistTooLarge);
  const halved = m.state.pageHalvings > before.pageHalvings;
  const relist = paged ? (before.lastRV === '' ? 'paged list at ""' : 'paged relist') : halved ? 'relist in half-size pages' : 'relist';
  const what = {
    resume: 'resume',
    relist,
    listInstead: 'plain list',
    // After a whole list did not fit, the restart after an expired token is paged as any list at "".
    relistLatest: phase.unpaged && !m.state.wholeListTooLarge ? 'unpaged list at ""' : 'relist at ""',
    retryPage: 'the same page again',
  }[phase.then];
  const failedToken = before.phase.name === 'listing' ? before.phase.token : undefined;
  const never = before.useWatchList && !m.state.useWatchList ? ', and never stream again' : '';
  m.send({ type: 'timer' });
  const request = m.effects.find((e) => e.type === 'list' || e.type === 'pickTimeout');
  const asked =
    request?.type === 'list'
      ? `list rv=${JSON.stringify(request.options.resourceVersion)} limit=${request.options.limit ?? '-'}`
      : request?.type;
  const latestLimit = phase.unpaged && !m.state.wholeListTooLarge ? '-' : '500';
  // With watchList, a relist at "" is a streaming list at "" (the resourceVersion made unavailable).
  const streamsAtLatest = m.state.phase.name === 'opening' && m.state.phase.streaming && m.state.lastRVUnavailable;
  if (phase.then === 'relistLatest' && asked !== `list rv="" limit=${latestLimit}` && !streamsAtLatest)
    return `relistLatest asked ${asked}`;
  if (phase.then === 'resume' && asked !== 'pickTimeout') return `resume asked ${asked}`;
  // The same continue token again, and the pages read kept (the list goes on in the same listing).
  if (phase.then === 'retryPage') {
    const again = request?.type === 'list' && request.options.continue === failedToken && failedToken !== undefined;
    const kept = m.state.phase.name === 'listing' && before.phase.name === 'listing' && m.state.phase.pages === before.phase.pages;
    if (!again || !kept) return `retryPage asked ${asked} continue=${request?.type === 'list' ? request.options.continue : '-'}`;
  }
  // Never the same request twice in a row: a paged list instead of a whole one, or smaller pages.
  const expected = paged ? `list rv=${JSON.stringify(before.lastRV)} limit=500` : halved ? 'list rv="" limit=250' : undefined;
  if (expected !== undefined && asked !== expected) return `${what} asked ${asked}`;
  const until = wait?.type === 'wait' && wait.untilAnswered ? ' or until the server answers' : '';
  return backoff ? `backoff${until}, ${what}${never}` : `${what} at once${never}`;
}

interface Row {
  readonly state: string;
  readonly when: string;
  readonly next: string;
}

function rulesTable(): Row[] {
  const markdown = readFileSync(join(import.meta.dirname, '../../docs/semantics.md'), 'utf8');
  const start = markdown.indexOf('## The reflector as a state machine');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  const lines = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| in state') && !line.startsWith('|---'));
  return lines.map((line) => {
    const [state = '', when = '', next = ''] = line.slice(2, -2).split(' | ');
    return { state, when, next };
  });
}

describe('the rules table in docs/semantics.md, against step()', () => {
  const rows = rulesTable();

  it('has a scenario for every row, and a row for every scenario', () => {
    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows.map((r) => r.when).sort()).toEqual(Object.keys(scenarios).sort());
  });

  it.each(rows)('$state: $when → $next', ({ state, when, next }) => {
    const build = scenarios[when];
    expect(build, `no scenario for "${when}"`).toBeDefined();
    // Replay up to the deciding input to see the state it was decided in.
    const before = replayBefore(build!);
    expect(before.phase.name, describeState(before)).toBe(state);
    const m = build!();
    expect(decided(m, before), `decided in: ${describeState(before)}\nnow: ${describeState(m.state)}`).toBe(next);
  });
});

/** The state just before the last input of a scenario (the one that decided). */
function replayBefore(build: () => Machine): ReflectorState<Obj> {
  const states: ReflectorState<Obj>[] = [];
  const original = Machine.prototype.send;
  Machine.prototype.send = function (this: Machine, input: Omitted, afterMs?: number) {
    states.push(this.state);
    return original.call(this, input, afterMs);
  };
  try {
    build();
  } finally {
    Machine.prototype.send = original;
  }
  return states[states.length - 1]!;
}

describe('step()', () => {
  it('ignores an input from a request that is no longer current', () => {
    const m = new Machine().open();
    const stale = m.state.request - 1;
    const result = step(
      reflectorConfig<Obj>({ decode: decoder(KubeObject) }),
      m.state,
      { type: 'frame', id: stale, frame: added('11') },
      20,
    );
    expect(result.state, describeState(m.state)).toBe(m.state);
    expect(result.effects).toEqual([]);
  });

  it('ignores a late failure of an earlier watch while a later one is open (stale: any id but the current one)', () => {
    const m = new Machine().open();
    const first = m.state.request;
    m.send({ type: 'watchEnded' }, 5_000).next(); // a clean end: the watch resumes, under a new request id
    expect(m.state.phase.name, describeState(m.state)).toBe('watching');
    const before = m.state;
    const late = step(
      reflectorConfig<Obj>({ decode: decoder(KubeObject) }),
      before,
      { type: 'watchFailed', id: first, error: network() },
      6_000,
    );
    expect(late.state, describeState(late.state)).toBe(before);
    expect(late.effects).toEqual([]);
  });

  it('list → watch: the effects, in order, that the shell carries out', () => {
    const summary = (effects: readonly ReflectorEffect<Obj>[]) =>
      effects.map((e) => (e.type === 'emit' ? `emit ${e.event.type}` : 'options' in e ? `${e.type} ${JSON.stringify(e.options)}` : e.type));
    const m = new Machine().send({ type: 'start' });
    expect(summary(m.effects), describeState(m.state)).toEqual(['list {"resourceVersion":"0","limit":500}']);
    m.send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') });
    expect(summary(m.effects), describeState(m.state)).toEqual(['progress', 'list {"limit":500,"continue":"c1"}']);
    m.send({ type: 'listed', page: page('10', [obj('b', '6')]) });
    expect(summary(m.effects), describeState(m.state)).toEqual(['emit replace', 'pickTimeout']);
    m.send({ type: 'timeoutPicked', timeoutSeconds: 321 });
    expect(summary(m.effects), describeState(m.state)).toEqual([
      'emit watch',
      'watch {"resourceVersion":"10","allowWatchBookmarks":true,"timeoutSeconds":321}',
      'armCheck',
    ]);
    expect(m.effects.find((e) => e.type === 'armCheck')).toMatchObject({ delayMs: 60_000 });
  });

  it('bookmarkTimeoutMs: 0 is off, as its default; a value aborts a watch without a bookmark for that long (left62)', () => {
    const armed = (m: Machine) => (m.effects.find((e) => e.type === 'armCheck') as { delayMs: number } | undefined)?.delayMs;
    for (const options of [{}, { bookmarkTimeoutMs: 0 }, { bookmarkTimeoutMs: Infinity }]) {
      const m = new Machine(options).open();
      const label = JSON.stringify(options);
      // The check is armed for the idle rule alone, and a check before it leaves the watch open.
      expect(armed(m), label).toBe(60_000);
      m.send({ type: 'check' }, 1);
      expect(m.state.phase.name, label).toBe('watching');
      expect(
        m.effects.map((e) => e.type),
        label,
      ).toEqual(['armCheck']);
    }
    const m = new Machine({ bookmarkTimeoutMs: 5_000 }).open();
    expect(armed(m)).toBe(5_000);
    m.send({ type: 'check' }, 5_000);
    expect(m.state.phase.name, describeState(m.state)).not.toBe('watching');
  });

  it('a streaming list: objects gathered by key until the initial-events-end bookmark, then one replace and a plain watch', () => {
    const end = event('BOOKMARK', { metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } });
    const m = new Machine({ watchList: true })
      .open()
      .frame(added('11'))
      .frame(event('MODIFIED', obj('b', '12')));
    expect(m.state.phase.name, describeState(m.state)).toBe('streaming');
    expect(m.effects).toEqual([]);
    m.frame(end);
    expect(m.state.phase.name, describeState(m.state)).toBe('watching');
    const replace = m.effects.find((e) => e.type === 'emit');
    expect(replace?.type === 'emit' && replace.event).toEqual({ type: 'replace', items: [obj('b', '12')], resourceVersion: '12' });
  });

  it('the adaptive idle rule: the armed check moves to 15 s once events come 200 ms apart, and back to 60 s after a resume for silence', () => {
    const armed = (m: Machine) => m.effects.flatMap((e) => (e.type === 'armCheck' ? [e.delayMs] : []));
    const m = new Machine().open();
    expect(armed(m)).toEqual([60_000]);
    m.frame(added('11'), 200);
    expect(armed(m), describeState(m.state)).toEqual([]); // one event: no gap known yet
    m.frame(added('12'), 200);
    expect(armed(m), describeState(m.state)).toEqual([15_000]); // busy: the check comes sooner
    m.frame(added('13'), 5_000);
    expect(armed(m), describeState(m.state)).toEqual([]); // 3 × 5 s = 15 s: no sooner than the armed check
    m.frame(added('14'), 10_000);
    m.send({ type: 'check' }, 14_999);
    expect(m.state.phase.name, describeState(m.state)).toBe('watching'); // 3 × 10 s = 30 s after the last event
    m.send({ type: 'check' }, 15_001);
    expect(m.state.phase.name, describeState(m.state)).toBe('waiting');
    m.next();
    expect(armed(m), describeState(m.state)).toEqual([60_000]); // silenced: the full minute until an event comes
    m.frame(added('15'), 100);
    // An event: busy again at the pace before the silence (3 × 10 s); the gap across the silence does not count.
    expect(armed(m), describeState(m.state)).toEqual([30_000]);
    m.frame(added('16'), 100);
    expect(armed(m), describeState(m.state)).toEqual([22_500]); // 100 ms: the longest recent gap fades (10 s × 0.75)
  });

  it('the adaptive idle rule, for any pace: a watch whose gaps grow at most 2.9× at a time (each under 59 s) is never resumed in between; once silent, it is resumed between 15 s and 60 s after its last event', () => {
    const armedAt = (m: Machine, at: number) => m.effects.flatMap((e) => (e.type === 'armCheck' ? [at + e.delayMs] : []));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 59_000 }),
        fc.array(fc.double({ min: 0.05, max: 2.9, noNaN: true }), { minLength: 1, maxLength: 60 }),
        (first, ratios) => {
          const gaps = [first];
          for (const r of ratios) gaps.push(Math.max(1, Math.min(59_000, Math.round(gaps[gaps.length - 1]! * r))));
          const m = new Machine().open();
          let checkAt = armedAt(m, m.now)[0]!;
          for (const [i, gap] of gaps.entries()) {
            // Fire every check due before the next event, as the shell would.
            const eventAt = m.now + gap;
            while (checkAt < eventAt) {
              m.send({ type: 'check' }, checkAt - m.now);
              expect(m.state.phase.name, `check at ${m.now} resumed: ${describeState(m.state)}`).toBe('watching');
              checkAt = armedAt(m, m.now)[0] ?? checkAt;
            }
            m.frame(added(String(11 + i)), eventAt - m.now);
            checkAt = armedAt(m, m.now)[0] ?? checkAt;
          }
          const lastEventAt = m.now;
          while (m.state.phase.name === 'watching') {
            m.send({ type: 'check' }, checkAt - m.now);
            checkAt = armedAt(m, m.now)[0] ?? checkAt;
          }
          const silence = m.now - lastEventAt;
          expect(silence).toBeGreaterThanOrEqual(15_000);
          expect(silence).toBeLessThanOrEqual(60_000);
          // Busy (the last gaps short) means the short limit: 3 × the longest recent gap at most.
          if (gaps.slice(-8).every((g) => g <= 600)) expect(silence).toBe(15_000);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the server answers again: a wait after a failure no server answered ends at once, in the way the timer would end it', () => {
    const m = fail(new Machine().open(), refused());
    expect(describeState(m.state)).toMatch(/^waiting then resume or until answered/);
    expect(m.effects.find((e) => e.type === 'wait')).toMatchObject({ backoff: true, untilAnswered: true });
    m.send({ type: 'answered' }, 100);
    expect(m.state.phase.name, describeState(m.state)).toBe('opening');
    expect(m.effects.map((e) => e.type)).toEqual(['pickTimeout']);
    // The timer of the wait that ended is stale now.
    const before = m.state;
    m.state = step(reflectorConfig<Obj>({ decode: decoder(KubeObject) }), before, { type: 'timer', id: before.request - 1 }, 200).state;
    expect(m.state).toBe(before);
  });

  it('the server answers again: any other wait (its backoff, a 429, a 5xx, a broken watch) goes on', () => {
    const tooMany = new InformerError('TooManyRequests', 'slow down', { status: 429, retryAfterSeconds: 7 });
    const unavailable = errorFromStatus(503, status(503, 'ServiceUnavailable'), 'watch');
    for (const error of [tooMany, unavailable, network()]) {
      const m = fail(new Machine().open(), error);
      expect(m.state.phase, describeState(m.state)).toMatchObject({ name: 'waiting', untilAnswered: false });
      const waiting = m.state;
      m.send({ type: 'answered' }, 100);
      expect(m.state, `${error.reason}: ${describeState(m.state)}`).toBe(waiting);
      expect(m.effects).toEqual([]);
    }
    // A list that failed with 500 after a refused connection: the server answered, so its backoff holds.
    const listed = new Machine()
      .send({ type: 'start' })
      .send({ type: 'listFailed', error: refused() })
      .send({ type: 'answered' })
      .send({ type: 'listFailed', error: errorFromStatus(500, status(500, 'InternalError'), 'list') });
    const waiting = listed.state;
    listed.send({ type: 'answered' });
    expect(listed.state, describeState(listed.state)).toBe(waiting);
  });

  it('the server answers again while nobody waits (listing, watching): nothing changes', () => {
    const m = new Machine().open();
    const watching = m.state;
    m.send({ type: 'answered' });
    expect(m.state).toBe(watching);
    const listing = new Machine().send({ type: 'start' });
    const state = listing.state;
    listing.send({ type: 'answered' });
    expect(listing.state).toBe(state);
  });

  it('pages that keep not fitting halve the limit down to 1 item, never to an unpaged list', () => {
    const m = new Machine({ pageSize: 4 }).send({ type: 'start' });
    const limits: (number | undefined)[] = [];
    for (let i = 0; i < 5; i++) {
      // A first page at "0" that does not fit counts as a whole answer once; then each failure halves the limit.
      const listing = m.effects.find((e) => e.type === 'list');
      if (listing?.type === 'list') limits.push(listing.options.limit);
      m.send({ type: 'listFailed', error: pageTooLarge() }, 500).send({ type: 'timer' }, 500);
    }
    const last = m.effects.find((e) => e.type === 'list');
    expect(last?.type === 'list' && last.options.limit, describeState(m.state)).toBe(1);
    expect(
      limits.every((l) => l !== undefined && l >= 1),
      JSON.stringify(limits),
    ).toBe(true);
  });

  it('a watch asked for 1 s that the server ends after 700 ms with no event ended on time: a clean end, not VeryShortWatch', () => {
    const m = new Machine().send({ type: 'start' }).send({ type: 'listed', page: page('10', [obj('a', '5')]) });
    m.send({ type: 'timeoutPicked', timeoutSeconds: 1 }).send({ type: 'watchEnded' }, 700);
    expect(
      m.effects.some((e) => e.type === 'emit' && e.event.type === 'error'),
      describeState(m.state),
    ).toBe(false);
    expect(m.effects.find((e) => e.type === 'wait')).toMatchObject({ backoff: false });
  });

  it('a streamed list\'s watch that expires (410) after the initial events makes the next streaming list ask for rv ""', () => {
    const m = new Machine({ watchList: true }).open().frame(added('5'));
    m.frame(event('BOOKMARK', { metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } }));
    expect(m.state.phase.name, describeState(m.state)).toBe('watching');
    fail(m, errorFromStatus(410, status(410, 'Expired'), 'watch')).next();
    const watch = m.effects.find((e) => e.type === 'watch');
    expect(watch?.type === 'watch' && watch.options.resourceVersion, describeState(m.state)).toBe('');
  });

  describe("a wait's length (the backoff is the reflector's state: step decides it)", () => {
    const delay = (m: Machine) => {
      const wait = m.effects.find((e) => e.type === 'wait');
      return wait?.type === 'wait' ? wait.delayMs : `no wait: ${describeState(m.state)}`;
    };
    const forbidden = () => errorFromStatus(403, status(403, 'Forbidden'), 'watch');
    /** A watch that fails with 403 before any event: a relist after the backoff, and its watch open again. */
    const refusedAgain = (m: Machine) => {
      fail(m, forbidden());
      const waited = delay(m);
      m.next();
      if (m.state.phase.name === 'listing')
        m.send({ type: 'listed', page: page('10', [obj('a', '5')]) }).send({ type: 'timeoutPicked', timeoutSeconds: 300 });
      return waited;
    };

    it("grows by the factor from initialMs, each wait in [d, 2d) by the jitter drawn (client-go's 800 ms … 30 s)", () => {
      const m = new Machine().open();
      m.randoms = [0, 0, 0, 0.5, 0, 0, 0, 0, 0.999];
      const waits = Array.from({ length: 9 }, () => refusedAgain(m));
      expect(waits).toEqual([800, 1600, 3200, 9600, 12_800, 25_600, 30_000, 30_000, 59_970]);
    });

    it('starts over after a watch that made progress (an event), not after one that brought nothing', () => {
      const m = new Machine().open();
      expect([refusedAgain(m), refusedAgain(m), refusedAgain(m)]).toEqual([800, 1600, 3200]);
      m.frame(added('11'));
      expect(refusedAgain(m)).toBe(800);
      expect(refusedAgain(m)).toBe(1600);
    });

    it('starts over after two quiet minutes since the last backoff began', () => {
      const m = new Machine().open();
      expect([refusedAgain(m), refusedAgain(m)]).toEqual([800, 1600]);
      m.now += 120_001;
      expect(refusedAgain(m)).toBe(800);
    });

    it('is at least what a Retry-After asked for, and the backoff when that is longer (the larger of the two)', () => {
      const tooMany = () => new InformerError('TooManyRequests', 'slow down', { status: 429, retryAfterSeconds: 7 });
      const m = fail(new Machine().open(), tooMany());
      expect(delay(m)).toBe(7000);
      m.next();
      m.randoms = [0.999];
      fail(m, tooMany());
      // The backoff went on under the Retry-After: its second step, 1.6 s, jittered to just under 3.2 s.
      expect(delay(m)).toBe(7000);
      m.next();
      m.randoms = [0.5, 0.5];
      fail(m, tooMany());
      expect(delay(m)).toBe(7000);
      m.next();
      fail(m, tooMany());
      expect(delay(m)).toBe(9600);
    });

    it('is 0 ms with no draw when the rules ask for no backoff', () => {
      const m = fail(new Machine().open().frame(added('11')), network());
      expect(m.effects.some((e) => e.type === 'drawBackoff')).toBe(false);
      expect(delay(m)).toBe(0);
    });

    it('follows the backoff option', () => {
      const m = new Machine({ backoff: { initialMs: 100, factor: 3, maxMs: 1000, jitter: 0 } }).open();
      expect(Array.from({ length: 4 }, () => refusedAgain(m))).toEqual([100, 300, 900, 1000]);
    });
  });

  it('describes a state in one line, without the objects', () => {
    const m = new Machine().send({ type: 'start' }).send({ type: 'listed', page: page('10', [obj('a', '5')], 'c1') });
    expect(describeState(m.state)).toBe(
      'listing rv="0" page 2 continue=c1 objects=1 | lastRV="" request=2 paginated brokenResumes=0 failuresAtSameRV=0',
    );
  });
});
