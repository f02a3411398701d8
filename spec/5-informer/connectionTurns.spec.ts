/**
 * Turns at a bounded set of HTTP/1.1 connections (src/5-informer/connectionTurns.ts), the per-namespace
 * fallback's answer to "a watch holds a socket for its life": the rules as a table over the pure step,
 * then the shell and `takingTurns` in virtual time at the default turn (2 s).
 */
import { describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { InformerError } from '../../src/0-model/errors.ts';
import {
  ConnectionTurns,
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
