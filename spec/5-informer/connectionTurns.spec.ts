/**
 * Turns at a bounded set of HTTP/1.1 connections (src/5-informer/connectionTurns.ts), the per-namespace
 * fallback's answer to "a watch holds a socket for its life": the rules as a table over the pure step,
 * then the shell and `takingTurns` in virtual time at the default turn (2 s).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Subscription } from 'rxjs';
import { InformerError } from '../../src/0-model/errors.ts';
import {
  ConnectionTurns,
  DEFAULT_DESCRIPTORS_QUIET_MS,
  DEFAULT_TURN_MS,
  http2Turns,
  initialTurns,
  isOutOfDescriptors,
  takingTurns,
  turnsStep,
  type TurnsConfig,
  type TurnsEffect,
  type TurnsInput,
  type TurnsState,
} from '../../src/5-informer/connectionTurns.ts';
import { fakeListWatch, listPage } from '../../src/testing/index.ts';
import type { WatchFrame } from '../../src/1-transport/listWatch.ts';
import { leakCheckingScheduler } from '../../marbles/support/leakCheckingScheduler.ts';

const T = DEFAULT_TURN_MS;
const config: TurnsConfig = { capacity: 2, turnMs: T };
const list = (id: number): TurnsInput => ({ type: 'request', id, kind: 'list', lastTurn: -1 });
const watch = (id: number, lastTurn = -1): TurnsInput => ({ type: 'request', id, kind: 'watch', lastTurn });
const stream = (id: number): TurnsInput => ({ type: 'request', id, kind: 'stream', lastTurn: -1 });
const settled = (id: number): TurnsInput => ({ type: 'settled', id });
const done = (id: number, exhausted = false): TurnsInput => ({ type: 'done', id, exhausted });
const check: TurnsInput = { type: 'check' };

/** Feeds `[input, now]` pairs; returns the state and the effects of the last one. */
function play(steps: readonly (readonly [TurnsInput, number])[], c: TurnsConfig = config): { state: TurnsState; effects: TurnsEffect[] } {
  let state = initialTurns(c);
  let effects: TurnsEffect[] = [];
  for (const [input, now] of steps) ({ state, effects } = turnsStep(c, state, input, now));
  return { state, effects };
}

const grant = (id: number, turn: number, shorten = false): TurnsEffect => ({ type: 'grant', id, turn, shorten });

describe('turnsStep: the rules', () => {
  const rows: {
    readonly rule: string;
    readonly steps: readonly (readonly [TurnsInput, number])[];
    readonly effects: readonly TurnsEffect[];
    readonly held?: readonly number[];
    readonly waiting?: readonly number[];
    readonly capacity?: number;
    readonly c?: TurnsConfig;
  }[] = [
    {
      rule: 'a free connection: granted at once, not shortened when nobody waits',
      steps: [[watch(1), 0]],
      effects: [grant(1, 1)],
      held: [1],
    },
    {
      rule: 'all connections held: the request waits (and, watches only, a check is armed for the first one to come due)',
      steps: [
        [watch(1), 0],
        [watch(2), 10],
        [list(3), 20],
      ],
      effects: [{ type: 'arm', delayMs: T - 20 }],
      held: [1, 2],
      waiting: [3],
    },
    {
      rule: 'a watch granted while others still wait asks the server to end it after one turn (shorten)',
      steps: [
        [list(1), 0],
        [list(2), 0],
        [watch(3), 0],
        [watch(4), 0],
        [done(1), 5],
      ],
      effects: [grant(3, 3, true), { type: 'arm', delayMs: 2 * T }],
      held: [2, 3],
      waiting: [4],
    },
    {
      rule: 'lists go before watches, whatever came first',
      steps: [
        [list(1), 0],
        [list(2), 0],
        [watch(3), 1],
        [list(4), 2],
        [done(1), 3],
      ],
      effects: [grant(4, 3)],
      waiting: [3],
    },
    {
      rule: 'among watches, the namespace whose watch had its turn longest ago goes first (never: first of all)',
      steps: [
        [list(1), 0],
        [list(2), 0],
        [watch(3, 7), 1],
        [watch(4, 2), 2],
        [watch(5, 9), 3],
        [done(1), 4],
      ],
      effects: [grant(4, 3, true), { type: 'arm', delayMs: 2 * T }],
      waiting: [3, 5],
    },
    {
      rule: 'a watch past its turn (not shortened: one turn) gives its connection up while someone waits',
      steps: [
        [watch(1), 0],
        [watch(2), 100],
        [watch(3), 200],
        [check, T],
      ],
      effects: [{ type: 'yield', id: 1 }],
      held: [1, 2],
    },
    {
      rule: 'a shortened watch (the server should have ended it) gives it up after two turns',
      steps: [
        [list(1), 0],
        [list(2), 0],
        [watch(3), 0],
        [watch(4), 0],
        [done(1), 0],
        [check, T],
      ],
      effects: [{ type: 'arm', delayMs: T }],
      held: [2, 3],
    },
    {
      rule: 'one watch gives way per waiter, not every watch past its turn',
      steps: [
        [watch(1), 0],
        [watch(2), 0],
        [watch(3), 10],
        [check, T + 50],
      ],
      effects: [{ type: 'yield', id: 1 }],
    },
    {
      rule: 'a streaming list (watchList) goes with the lists, before watches, and is never shortened',
      steps: [
        [list(1), 0],
        [watch(2), 0],
        [stream(3), 0],
        [watch(4), 0],
        [done(1), 5],
      ],
      effects: [grant(3, 2)],
      c: { capacity: 1, turnMs: T },
    },
    {
      rule: 'a streaming list does not give way before its initial events are in (no check armed)',
      steps: [
        [stream(1), 0],
        [watch(2), 1],
        [check, 10 * T],
      ],
      effects: [],
      c: { capacity: 1, turnMs: T },
    },
    {
      rule: 'its initial events in, it is a watch that came then: due one turn later',
      steps: [
        [stream(1), 0],
        [watch(2), 1],
        [settled(1), 500],
      ],
      effects: [{ type: 'arm', delayMs: T }],
      c: { capacity: 1, turnMs: T },
    },
    {
      rule: 'and then gives way like a watch',
      steps: [
        [stream(1), 0],
        [watch(2), 1],
        [settled(1), 500],
        [check, 500 + T],
      ],
      effects: [{ type: 'yield', id: 1 }],
      c: { capacity: 1, turnMs: T },
    },
    {
      rule: 'lists are never told to give way',
      steps: [
        [list(1), 0],
        [list(2), 0],
        [watch(3), 0],
        [check, 10 * T],
      ],
      effects: [],
      held: [1, 2],
    },
    {
      rule: 'nobody waits any more: the check is disarmed',
      steps: [
        [watch(1), 0],
        [watch(2), 0],
        [watch(3), 10],
        [done(3), 20],
      ],
      effects: [{ type: 'disarm' }],
      held: [1, 2],
      waiting: [],
    },
    {
      rule: 'a request that failed for want of a descriptor (EMFILE): the bound drops to what the others hold, one fewer at least',
      steps: [
        [watch(1), 0],
        [watch(2), 0],
        [watch(3), 0],
        [done(2, true), 5],
      ],
      effects: [],
      held: [1],
      waiting: [3],
      capacity: 1,
    },
    {
      rule: "a new capacity (HTTP/2 known, the server's SETTINGS): the waiting are granted up to it, not shortened once nobody waits",
      steps: [
        [watch(1), 0],
        [watch(2), 0],
        [watch(3), 0],
        [watch(4), 0],
        [{ type: 'capacity', capacity: 600 }, 5],
      ],
      effects: [grant(3, 3), grant(4, 4), { type: 'disarm' }],
      held: [1, 2, 3, 4],
      waiting: [],
      capacity: 600,
    },
    {
      rule: 'a lower capacity ends nothing held: nobody more is granted until fewer are held, and the watches take turns',
      steps: [
        [watch(1), 0],
        [watch(2), 0],
        [{ type: 'capacity', capacity: 1 }, 0],
        [watch(3), 1],
        [check, T],
      ],
      effects: [{ type: 'yield', id: 1 }],
      held: [1, 2],
      waiting: [3],
      capacity: 1,
    },
    {
      rule: 'a capacity replaces the bound EMFILE lowered',
      steps: [
        [watch(1), 0],
        [watch(2), 0],
        [done(2, true), 1],
        [{ type: 'capacity', capacity: 8 }, 2],
      ],
      effects: [],
      capacity: 8,
    },
    {
      rule: 'the bound never drops below one connection',
      steps: [
        [watch(1), 0],
        [done(1, true), 5],
        [watch(2), 6],
      ],
      effects: [grant(2, 2)],
      capacity: 1,
    },
  ];
  it.each(rows)('$rule', ({ steps, effects, held, waiting, capacity, c }) => {
    const out = play(steps, c);
    expect(out.effects).toEqual(effects);
    if (held) expect(out.state.held.map((h) => h.id)).toEqual(held);
    if (waiting) expect(out.state.waiting.map((w) => w.id)).toEqual(waiting);
    if (capacity !== undefined) expect(out.state.capacity).toBe(capacity);
  });
});

describe("turnsStep: EMFILE's lowering recovers after quiet periods (default: a minute)", () => {
  const Q = DEFAULT_DESCRIPTORS_QUIET_MS;
  /** 16 connections: a step back up is 2 (an eighth). Four lists held, the fourth fails for want of a descriptor at 0: 3. */
  const c16: TurnsConfig = { capacity: 16, turnMs: T };
  const lowered: readonly (readonly [TurnsInput, number])[] = [
    [list(1), 0],
    [list(2), 0],
    [list(3), 0],
    [list(4), 0],
    [done(4, true), 0],
  ];
  /** Feeds `[input, now, capacity after it]` rows after `lowered`, checking the bound after each. */
  function trace(rows: readonly (readonly [TurnsInput, number, number])[], c: TurnsConfig = c16): TurnsState {
    let { state } = play(lowered, c);
    expect(state.capacity).toBe(3);
    for (const [input, now, capacity] of rows) {
      state = turnsStep(c, state, input, now).state;
      expect([now, state.capacity]).toEqual([now, capacity]);
    }
    return state;
  }

  it('the default quiet period is a minute', () => {
    expect(Q).toBe(60_000);
  });

  it('after a quiet minute the bound steps up by an eighth of the configured one, each minute, to it and never past it', () => {
    trace([
      [check, Q - 1, 3],
      [check, Q, 5],
      [check, 2 * Q - 1, 5],
      [check, 2 * Q, 7],
      // With no input for a while (nobody waits, no timer), one step at the next input, the next a minute after it.
      [check, 10 * Q, 9],
      [check, 11 * Q, 11],
      [check, 12 * Q, 13],
      [check, 13 * Q, 15],
      [check, 14 * Q, 16],
      [check, 99 * Q, 16],
    ]);
  });

  it('a renewed EMFILE lowers it again and restarts the quiet minute', () => {
    trace([
      [check, Q - 10, 3],
      [done(3, true), Q - 5, 2],
      [check, Q, 2],
      [check, 2 * Q - 6, 2],
      [check, 2 * Q - 5, 4],
    ]);
  });

  it('a step met by a renewed EMFILE within its minute doubles the next wait, up to 16 minutes; a step that stands a minute clears that', () => {
    const state = trace([
      [check, Q, 5],
      [list(5), Q, 5],
      [list(6), Q, 5],
      // The step overshot: the next request fails. Twice the wait (2 minutes from now).
      [done(6, true), Q + 1, 4],
      // Another failure of the same step (held 3 lists and list 5): not a second strike.
      [done(5, true), Q + 2, 3],
      [check, 3 * Q + 1, 3],
      [check, 3 * Q + 2, 5],
      [list(7), 3 * Q + 2, 5],
      [list(8), 3 * Q + 2, 5],
      [done(8, true), 3 * Q + 3, 4],
      // A second strike: 4 minutes.
      [check, 7 * Q + 2, 4],
      [check, 7 * Q + 3, 6],
      [list(9), 7 * Q + 3, 6],
      [list(10), 7 * Q + 3, 6],
      [done(10, true), 7 * Q + 4, 5],
      [check, 15 * Q + 4, 7],
      [list(11), 15 * Q + 4, 7],
      [list(12), 15 * Q + 4, 7],
      [done(12, true), 15 * Q + 5, 6],
      [check, 31 * Q + 5, 8],
      [list(13), 31 * Q + 5, 8],
      [list(14), 31 * Q + 5, 8],
      [done(14, true), 31 * Q + 6, 7],
    ]);
    // Four strikes: 16 minutes, and no longer after a fifth.
    expect([state.strikes, state.raiseAt]).toEqual([4, 47 * Q + 6]);
    const more = [
      [check, 47 * Q + 6, 9],
      [list(15), 47 * Q + 6, 9],
      [list(16), 47 * Q + 6, 9],
      [done(16, true), 47 * Q + 7, 8],
    ] as const;
    let after = state;
    for (const [input, now] of more) after = turnsStep(c16, after, input, now).state;
    expect([after.strikes, after.raiseAt, after.capacity]).toEqual([4, 63 * Q + 7, 8]);
    // The shortage passed: a step stands its 16 minutes, and the next step waits one minute again.
    after = turnsStep(c16, after, check, 63 * Q + 7).state;
    after = turnsStep(c16, after, check, 79 * Q + 7).state;
    expect([after.capacity, after.strikes, after.raiseAt]).toEqual([12, 0, 80 * Q + 7]);
  });

  it('an EMFILE long after a step that stood its period is a new shortage: a minute, not twice that', () => {
    const state = trace([
      [check, Q, 5],
      [done(3, true), 5 * Q, 2],
    ]);
    expect([state.strikes, state.raiseAt]).toEqual([0, 6 * Q]);
  });

  it('while someone waits, the check is armed for the step up, which lets them in', () => {
    let { state, effects } = play([...lowered, [list(5), 10]], c16);
    expect(effects).toEqual([{ type: 'arm', delayMs: Q - 10 }]);
    ({ state, effects } = turnsStep(c16, state, check, Q));
    expect(effects).toEqual([grant(5, 5)]);
    expect([state.capacity, state.held.map((h) => h.id)]).toEqual([5, [1, 2, 3, 5]]);
  });

  it('nobody waits: no timer for the step (it is taken at the next input)', () => {
    const { state, effects } = play([...lowered, [done(3), 10]], c16);
    expect(effects).toEqual([]);
    expect([state.checkAt, state.raiseAt]).toEqual([Infinity, Q]);
  });

  it('a capacity input replaces the bound and what it steps back up to', () => {
    const state = trace([
      [{ type: 'capacity', capacity: 8 }, 10, 8],
      [check, Q, 8],
    ]);
    expect([state.ceiling, state.raiseAt]).toEqual([8, Infinity]);
  });
});

describe('takingTurns: namespaces taking turns, in virtual time at the default turn', () => {
  it('three namespaces, one connection: each watch gives way after its turn (two when it asked the server for one), as asked when nobody waits', () => {
    const scheduler = leakCheckingScheduler(60_000);
    scheduler.run(({ cold }) => {
      const turns = new ConnectionTurns({ capacity: 1 }, scheduler);
      const a = fakeListWatch({ watches: [cold('-')] }, { scheduler });
      const b = fakeListWatch({ watches: [cold('-')] }, { scheduler });
      const c = fakeListWatch({ watches: [cold('-')] }, { scheduler });
      const ends: string[] = [];
      const subs: Subscription[] = [];
      for (const [name, lw] of [
        ['a', a],
        ['b', b],
        ['c', c],
      ] as const) {
        subs.push(
          takingTurns(lw, turns)
            .watch({ resourceVersion: '5', timeoutSeconds: 300 })
            .subscribe({ complete: () => ends.push(`${name}@${scheduler.now()}`) }),
        );
      }
      scheduler.schedule(() => {
        // a came when nobody waited: its watch as asked; it gave way one turn after others came.
        expect(a.watches[0]!.options.timeoutSeconds).toBe(300);
        expect(a.watches[0]!.end).toBe('unsubscribe');
        // b came to a queue (c waited): it asked the server for one turn (2 s); the server ignored it, so b gave way after two.
        expect(b.watches[0]!.calledAt).toBe(T);
        expect(b.watches[0]!.options.timeoutSeconds).toBe(T / 1000);
        expect(ends).toEqual([`a@${T}`, `b@${3 * T}`]);
        // c's turn: nobody waits, so its watch is as the reflector asked, and runs on.
        expect(c.watches[0]!.calledAt).toBe(3 * T);
        expect(c.watches[0]!.options.timeoutSeconds).toBe(300);
        expect(turns.counts).toEqual({ held: 1, waiting: 0, capacity: 1 });
        for (const s of subs) s.unsubscribe();
        expect(turns.counts).toEqual({ held: 0, waiting: 0, capacity: 1 });
      }, 10 * T);
    });
  });

  it('a watch the server ends gives its connection to the next at once; a list waits for no watch to come due', () => {
    const scheduler = leakCheckingScheduler(60_000);
    scheduler.run(({ cold }) => {
      const turns = new ConnectionTurns({ capacity: 1 }, scheduler);
      const a = fakeListWatch({ watches: [cold('500ms |')] }, { scheduler });
      const b = fakeListWatch({ lists: [cold('10ms (p|)', { p: listPage('7', []) })], watches: [cold('-')] }, { scheduler });
      const sa = takingTurns(a, turns).watch({ resourceVersion: '5', timeoutSeconds: 300 }).subscribe();
      const sb = takingTurns(b, turns).list({ resourceVersion: '0' }).subscribe();
      const sc = takingTurns(b, turns).watch({ resourceVersion: '7', timeoutSeconds: 300 }).subscribe();
      scheduler.schedule(() => {
        expect(b.lists[0]!.calledAt).toBe(500);
        expect(b.watches[0]!.calledAt).toBe(510);
        expect(turns.counts).toEqual({ held: 1, waiting: 0, capacity: 1 });
        for (const s of [sa, sb, sc]) s.unsubscribe();
      }, 1000);
    });
  });

  it('a watch that waited and was ended by its reflector (idle) keeps its place: it goes before namespaces that had a turn since', () => {
    const scheduler = leakCheckingScheduler(60_000);
    scheduler.run(({ cold }) => {
      const turns = new ConnectionTurns({ capacity: 1 }, scheduler);
      const watches = (n: number) => Array.from({ length: n }, () => cold<WatchFrame>('100ms |'));
      const a = fakeListWatch({ watches: watches(5) }, { scheduler });
      const b = fakeListWatch({ watches: watches(5) }, { scheduler });
      const c = fakeListWatch({ watches: watches(5) }, { scheduler });
      const ta = takingTurns(a, turns);
      const tb = takingTurns(b, turns);
      const tc = takingTurns(c, turns);
      const opts = { resourceVersion: '1', timeoutSeconds: 300 };
      ta.watch(opts).subscribe(); // turn 1 at 0, ends at 100
      const waitingB = tb.watch(opts).subscribe(); // waits
      waitingB.unsubscribe(); // its reflector gave up waiting …
      tc.watch(opts).subscribe(); // turn 2 at 100
      ta.watch(opts).subscribe(); // a again: had turn 1
      tb.watch(opts).subscribe(); // … and opened it again: never had a turn, so it goes before a
      scheduler.schedule(() => {
        expect(c.watches.map((w) => w.calledAt)).toEqual([100]);
        expect(b.watches.map((w) => w.calledAt)).toEqual([200]);
        expect(a.watches.map((w) => w.calledAt)).toEqual([0, 300]);
      }, 1000);
    });
  });

  it('a streaming list (watchList) holds its connection until its initial events are in, then gives way one turn later', () => {
    const scheduler = leakCheckingScheduler(60_000);
    scheduler.run(({ cold }) => {
      const turns = new ConnectionTurns({ capacity: 1 }, scheduler);
      const end = {
        type: 'BOOKMARK',
        object: { metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } } },
      };
      const a = fakeListWatch({ watches: [cold<WatchFrame>('5s e', { e: end })] }, { scheduler });
      const b = fakeListWatch({ watches: [cold('-')] }, { scheduler });
      const ends: number[] = [];
      const sa = takingTurns(a, turns)
        .watch({ resourceVersion: '', sendInitialEvents: true, timeoutSeconds: 300 })
        .subscribe({ complete: () => ends.push(scheduler.now()) });
      const sb = takingTurns(b, turns).watch({ resourceVersion: '9', timeoutSeconds: 300 }).subscribe();
      scheduler.schedule(() => {
        // Not shortened though b waited; not told to give way during its 5 s of initial events.
        expect(a.watches[0]!.options.timeoutSeconds).toBe(300);
        expect(ends).toEqual([5000 + T]);
        expect(b.watches[0]!.calledAt).toBe(5000 + T);
        sa.unsubscribe();
        sb.unsubscribe();
      }, 20_000);
    });
  });

  it('room for every request (HTTP/2, streams to spare): nobody waits, each goes at once as asked and runs on', () => {
    const scheduler = leakCheckingScheduler(60_000);
    scheduler.run(({ cold }) => {
      const turns = new ConnectionTurns({ capacity: 600 }, scheduler);
      const a = fakeListWatch({ watches: [cold('-'), cold('-')] }, { scheduler });
      const open = takingTurns(a, turns);
      const subs = [open.watch({ timeoutSeconds: 300 }).subscribe(), open.watch({ timeoutSeconds: 300 }).subscribe()];
      scheduler.schedule(() => {
        expect(a.watches.map((w) => [w.calledAt, w.options.timeoutSeconds, w.end])).toEqual([
          [0, 300, undefined],
          [0, 300, undefined],
        ]);
        expect(turns.counts).toEqual({ held: 2, waiting: 0, capacity: 600 });
        for (const s of subs) s.unsubscribe();
        expect(turns.counts.held).toBe(0);
      }, 10 * T);
    });
  });

  it("a capacity given as a function (HTTP/2 known, the server's SETTINGS) is asked at each input: a change lets the waiting in", () => {
    const scheduler = leakCheckingScheduler(60_000);
    scheduler.run(({ cold }) => {
      let capacity = 1;
      const turns = new ConnectionTurns({ capacity: () => capacity }, scheduler);
      const namespaces = [0, 1, 2].map(() => fakeListWatch({ lists: [cold('10ms (p|)', { p: listPage('7', []) })] }, { scheduler }));
      const subs = namespaces.map((lw) => takingTurns(lw, turns).list({}).subscribe());
      expect(turns.counts).toEqual({ held: 1, waiting: 2, capacity: 1 });
      // The server turned out to allow more: said with the next input (the first list's end), both waiting go at once.
      capacity = 3;
      scheduler.schedule(() => {
        expect(namespaces.map((lw) => lw.lists[0]!.calledAt)).toEqual([0, 10, 10]);
        expect(turns.counts).toEqual({ held: 0, waiting: 0, capacity: 3 });
        for (const s of subs) s.unsubscribe();
      }, 100);
    });
  });

  it('EMFILE on a request: it fails as it did (the reflector reports it), and the bound drops', () => {
    const scheduler = leakCheckingScheduler(60_000);
    scheduler.run(({ cold }) => {
      const turns = new ConnectionTurns({ capacity: 3 }, scheduler);
      const emfile = new InformerError('NetworkError', 'list /x: EMFILE connect EMFILE', {
        phase: 'list',
        cause: Object.assign(new Error('connect EMFILE'), { code: 'EMFILE' }),
      });
      const ok = fakeListWatch({ lists: [cold('-')] }, { scheduler });
      const bad = fakeListWatch({ lists: [cold('#', undefined, emfile)] }, { scheduler });
      const held = takingTurns(ok, turns).list({}).subscribe();
      let failed: unknown;
      takingTurns(bad, turns)
        .list({})
        .subscribe({ error: (e: unknown) => (failed = e) });
      scheduler.schedule(() => {
        expect(failed).toBe(emfile);
        expect(turns.counts).toEqual({ held: 1, waiting: 0, capacity: 1 });
        held.unsubscribe();
      }, 1);
    });
  });
});

describe("ConnectionTurns: EMFILE's lowering recovers, in virtual time at the default quiet minute", () => {
  it('a namespace waiting behind the lowered bound is let in a minute after the EMFILE, not never', () => {
    const scheduler = leakCheckingScheduler(10 * DEFAULT_DESCRIPTORS_QUIET_MS);
    scheduler.run(({ cold }) => {
      const turns = new ConnectionTurns({ capacity: 3 }, scheduler);
      const emfile = new InformerError('NetworkError', 'list /x: EMFILE connect EMFILE', {
        phase: 'list',
        cause: Object.assign(new Error('connect EMFILE'), { code: 'EMFILE' }),
      });
      const held = [0, 1].map(() => fakeListWatch({ lists: [cold('-')] }, { scheduler }));
      const bad = fakeListWatch({ lists: [cold('#', undefined, emfile)] }, { scheduler });
      const late = fakeListWatch({ lists: [cold('-')] }, { scheduler });
      const subs = held.map((lw) => takingTurns(lw, turns).list({}).subscribe());
      takingTurns(bad, turns)
        .list({})
        .subscribe({ error: () => undefined });
      scheduler.schedule(() => {
        expect(turns.counts).toEqual({ held: 2, waiting: 0, capacity: 2 });
        subs.push(takingTurns(late, turns).list({}).subscribe());
      }, 10);
      scheduler.schedule(() => {
        expect(late.lists).toHaveLength(0);
        expect(turns.counts).toEqual({ held: 2, waiting: 1, capacity: 2 });
      }, DEFAULT_DESCRIPTORS_QUIET_MS - 1);
      scheduler.schedule(() => {
        expect(late.lists.map((l) => l.calledAt)).toEqual([DEFAULT_DESCRIPTORS_QUIET_MS]);
        expect(turns.counts).toEqual({ held: 3, waiting: 0, capacity: 3 });
        for (const s of subs) s.unsubscribe();
      }, DEFAULT_DESCRIPTORS_QUIET_MS + 1);
    });
  });
});

describe('ConnectionTurns given no scheduler: the clock of every other duration', () => {
  afterEach(() => vi.useRealTimers());

  /** Three lists held at `turns`, one of them fails with EMFILE (the bound drops to 2), and a fourth waits. */
  function lowered(turns: ConnectionTurns): string[] {
    const granted: string[] = [];
    const ask = (name: string) => turns.request('list', -1, () => ({ grant: () => granted.push(name), yield: () => undefined }));
    const [, , bad] = ['a', 'b', 'c'].map(ask);
    bad!.release(true);
    ask('late');
    expect(turns.counts).toEqual({ held: 2, waiting: 1, capacity: 2 });
    return granted;
  }

  it("inside rxjs's TestScheduler.run(): the quiet minute after EMFILE passes in virtual time", () => {
    const scheduler = leakCheckingScheduler(10 * DEFAULT_DESCRIPTORS_QUIET_MS);
    const seen: number[] = [];
    scheduler.run(() => {
      const turns = new ConnectionTurns({ capacity: 3 });
      const granted = lowered(turns);
      scheduler.schedule(() => seen.push(granted.length), DEFAULT_DESCRIPTORS_QUIET_MS - 1);
      scheduler.schedule(() => seen.push(granted.length), DEFAULT_DESCRIPTORS_QUIET_MS);
    });
    expect(seen).toEqual([3, 4]);
  });

  it('a step of the wall clock does not move the quiet minute, forward or back', () => {
    const fake = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;
    for (const step of [3_600_000, -3_600_000]) {
      vi.useFakeTimers({ toFake: [...fake] });
      const turns = new ConnectionTurns({ capacity: 3 });
      const granted = lowered(turns);
      vi.setSystemTime(Date.now() + step);
      // An input after the step (the late one leaves and asks again): a wall clock an hour on took the step up now.
      turns.request('list', -1, () => ({ grant: () => granted.push('again'), yield: () => undefined })).release();
      vi.advanceTimersByTime(DEFAULT_DESCRIPTORS_QUIET_MS - 1);
      expect(granted, `step ${step}`).toEqual(['a', 'b', 'c']);
      vi.advanceTimersByTime(1);
      expect(granted, `step ${step}`).toEqual(['a', 'b', 'c', 'late']);
      vi.useRealTimers();
    }
  });
});

describe("http2Turns: the fallback's share of the HTTP/2 pool", () => {
  it("three quarters of maxConnections × the server's streams, at least one; the rest is left to other requests", () => {
    expect([http2Turns(8 * 100), http2Turns(8 * 250), http2Turns(8 * 1000), http2Turns(8 * 1), http2Turns(1), http2Turns(0)]).toEqual([
      600, 1500, 6000, 6, 1, 1,
    ]);
  });
});

describe('isOutOfDescriptors', () => {
  it('EMFILE and ENFILE, on the error or its causes; nothing else', () => {
    const node = (code: string) => Object.assign(new Error(code), { code });
    expect(isOutOfDescriptors(node('EMFILE'))).toBe(true);
    expect(isOutOfDescriptors(new InformerError('NetworkError', 'x', { cause: node('ENFILE') }))).toBe(true);
    expect(isOutOfDescriptors(new InformerError('NetworkError', 'x', { cause: node('ECONNRESET') }))).toBe(false);
    expect(isOutOfDescriptors('EMFILE')).toBe(false);
    expect(isOutOfDescriptors(undefined)).toBe(false);
  });
});
