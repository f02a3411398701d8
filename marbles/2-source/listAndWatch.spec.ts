import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { NEVER, Observable, map, merge, take, timer } from 'rxjs';
import { z } from 'zod';
import { errorFromStatus } from '../../src/0-model/errors.ts';
import { InformerError, KubeObject, kubeObject } from '../../src/index.ts';
import { decoder, listAndWatch, type ListAndWatchOptions, type SourceEvent, type WatchFrame } from '../../src/pipeline.ts';
import {
  fakeListWatch,
  httpFailure,
  listPage,
  networkFailure,
  watchBookmark,
  watchEvent,
  watchStatus,
  type FakeListWatch,
  type FakeRequest,
} from '../support/fakeListWatch.ts';

// ── fixtures ─────────────────────────────────────────────────────────────────

/** Virtual time never runs past this, so a runaway retry loop fails the test instead of hanging it. */
const GUARD_MS = 24 * 3600_000;

type Obj = KubeObject;
const obj = (name: string, rv: string, extra: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
  ...extra,
});
const added = (name: string, rv: string) => watchEvent('ADDED', obj(name, rv));
const modified = (name: string, rv: string) => watchEvent('MODIFIED', obj(name, rv));
const deleted = (name: string, rv: string) => watchEvent('DELETED', obj(name, rv));

function summary(event: SourceEvent<Obj>): string {
  switch (event.type) {
    case 'replace':
      return `replace@${event.resourceVersion}[${event.items.map((o) => o.metadata.name).join(',')}]`;
    case 'added':
    case 'modified':
    case 'deleted':
      return `${event.type} ${event.object.metadata.name}@${event.resourceVersion}`;
    case 'deletedKey':
      return `deletedKey ${event.key}@${event.resourceVersion}`;
    case 'bookmark':
    case 'watch':
      return `${event.type}@${event.resourceVersion}`;
    case 'error':
      return `error ${event.error.reason}`;
    case 'resync':
      return 'resync';
  }
}

function describeRequest(request: FakeRequest<object>): string {
  const o = request.options as Record<string, unknown>;
  if (request.kind === 'list') {
    const parts = [`list rv=${o.resourceVersion === undefined ? '-' : JSON.stringify(o.resourceVersion)}`];
    if (o.limit !== undefined) parts.push(`limit=${String(o.limit)}`);
    if (o.continue !== undefined) parts.push(`continue=${String(o.continue)}`);
    return `${request.calledAt} ${parts.join(' ')}`;
  }
  return `${request.calledAt} watch rv=${JSON.stringify(o.resourceVersion)}`;
}

interface Ctx {
  readonly ts: TestScheduler;
  readonly cold: TestScheduler['createColdObservable'];
  readonly flush: () => void;
}

function scenario(body: (ctx: Ctx) => void): void {
  const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  ts.run(({ cold, flush }) => {
    ts.maxFrames = GUARD_MS;
    body({ ts, cold, flush });
  });
}

/** Subscribes to listAndWatch over the fake at frame 0, logs `time summary` lines, unsubscribes at `untilMs`. */
function start(ts: TestScheduler, fake: FakeListWatch, untilMs: number, options: Partial<ListAndWatchOptions<Obj>> = {}) {
  const log: string[] = [];
  const events: SourceEvent<Obj>[] = [];
  const source: Observable<SourceEvent<Obj>> = listAndWatch<Obj>(fake, {
    decode: decoder(KubeObject),
    scheduler: ts,
    random: () => 0,
    ...options,
  });
  const subscription = source.subscribe((event) => {
    events.push(event);
    log.push(`${ts.now()} ${summary(event)}`);
  });
  ts.schedule(() => subscription.unsubscribe(), untilMs);
  return { log, events, subscription };
}

const calls = (fake: FakeListWatch) => fake.requests.map(describeRequest);
const errorsOf = (events: readonly SourceEvent<Obj>[]) => events.flatMap((e) => (e.type === 'error' ? [e.error] : []));

// ── list, then watch ─────────────────────────────────────────────────────────

describe('listAndWatch: list then watch', () => {
  it('lists at rv "0" (limit 500), replaces, then watches from the list rv with bookmarks and timeoutSeconds in [300, 600)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [obj('a', '5'), obj('b', '7')]) })],
        watches: [cold<WatchFrame>('--a-m-d', { a: added('c', '11'), m: modified('a', '12'), d: deleted('b', '13') })],
      });
      const { log } = start(ts, fake, 100);
      flush();
      expect(log).toEqual(['1 replace@10[a,b]', '1 watch@10', '3 added c@11', '5 modified a@12', '7 deleted b@13']);
      expect(fake.lists[0]?.options).toEqual({ resourceVersion: '0', limit: 500 });
      expect(fake.watches[0]?.options).toEqual({ resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300 });
      expect(fake.lists[0]?.end).toBe('complete');
      expect(fake.watches[0]?.end).toBe('unsubscribe');
      expect(fake.maxActive).toBe(1);
    });
  });

  it('frames a watch delivers as it is opened (synchronously, on subscribe) are queued and stepped in order', () => {
    scenario(({ ts, cold, flush }) => {
      const sync = new Observable<WatchFrame>((subscriber) => {
        subscriber.next(added('c', '11'));
        subscriber.next(modified('c', '12'));
        subscriber.next(watchBookmark('13'));
      });
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })], watches: [sync] });
      const { log } = start(ts, fake, 100);
      flush();
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '1 added c@11', '1 modified c@12', '1 bookmark@13']);
    });
  });

  it('draws timeoutSeconds from [300, 600) with the random source (and honours minWatchTimeoutSeconds)', () => {
    for (const [random, min, expected] of [
      [0.5, undefined, 450],
      [0.999999, undefined, 599],
      [0, 60, 60],
      [0.75, 60, 105],
    ] as const) {
      scenario(({ ts, cold, flush }) => {
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })] });
        start(ts, fake, 10, { random: () => random, ...(min === undefined ? {} : { minWatchTimeoutSeconds: min }) });
        flush();
        expect(fake.watches[0]?.options.timeoutSeconds).toBe(expected);
      });
    }
  });

  it('pages a list with continue tokens: limit 500 on every page, resourceVersion omitted on continue pages, one replace at the first page rv', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-(p|)', { p: listPage('10', [obj('a', '1')], 't1') }),
          cold('-(p|)', { p: listPage('10', [obj('b', '2')], 't2') }),
          cold('-(p|)', { p: listPage('10', [obj('c', '3')]) }),
        ],
      });
      const { log } = start(ts, fake, 10);
      flush();
      expect(fake.lists.map((l) => l.options)).toEqual([
        { resourceVersion: '0', limit: 500, continue: undefined },
        { resourceVersion: undefined, limit: 500, continue: 't1' },
        { resourceVersion: undefined, limit: 500, continue: 't2' },
      ]);
      expect(log).toEqual(['3 replace@10[a,b,c]', '3 watch@10']);
      expect(fake.maxActive).toBe(1);
    });
  });

  it('pageSize sets the limit; pageSize 0 turns paging off', () => {
    for (const [pageSize, limit] of [
      [50, 50],
      [0, undefined],
    ] as const) {
      scenario(({ ts, cold, flush }) => {
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })] });
        start(ts, fake, 10, { pageSize });
        flush();
        expect(fake.lists[0]?.options.limit).toBe(limit);
      });
    }
  });

  it('an empty list still replaces (so the informer can sync)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('3', []) })] });
      const { log } = start(ts, fake, 10);
      flush();
      expect(log).toEqual(['1 replace@3[]', '1 watch@3']);
    });
  });
});

// ── watch endings ────────────────────────────────────────────────────────────

describe('listAndWatch: how a watch ends', () => {
  it('a clean end after events re-watches at once from the last rv (bookmarks advance it)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [
          cold<WatchFrame>('--a--(b|)', { a: added('x', '11'), b: watchBookmark('15') }),
          cold<WatchFrame>('---m', { m: modified('x', '16') }),
        ],
      });
      const { log } = start(ts, fake, 100);
      flush();
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '3 added x@11', '6 bookmark@15', '6 watch@15', '9 modified x@16']);
      expect(calls(fake)).toEqual(['0 list rv="0" limit=500', '1 watch rv="10"', '6 watch rv="15"']);
      expect(fake.maxActive).toBe(1);
    });
  });

  it('a watch that ends cleanly after 1 s without events is not "very short": re-watch at once', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('1s |')],
      });
      const { log } = start(ts, fake, 5000);
      flush();
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '1001 watch@10']);
    });
  });

  it('a very short watch (no event, < 1 s) is a VeryShortWatch error, then backoff and re-watch from the same rv', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('-|'), cold<WatchFrame>('998ms |')],
      });
      const { log, events } = start(ts, fake, 5000);
      flush();
      expect(log).toEqual([
        '1 replace@10[]',
        '1 watch@10',
        '2 error VeryShortWatch',
        '802 watch@10',
        '1800 error VeryShortWatch',
        '3400 watch@10',
      ]);
      expect(errorsOf(events)[0]).toMatchObject({ reason: 'VeryShortWatch', phase: 'watch' });
      expect(fake.lists).toHaveLength(1);
    });
  });

  it('HTTP 410 on a watch after progress: relist at once at the last rv (not paged), then watch from the new list rv', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [obj('a', '5')]) }), cold('-(p|)', { p: listPage('20', [obj('a', '19')]) })],
        watches: [cold<WatchFrame>('-a-#', { a: added('b', '12') }, httpFailure(410))],
      });
      const { log, events } = start(ts, fake, 5000);
      flush();
      expect(log).toEqual(['1 replace@10[a]', '1 watch@10', '2 added b@12', '4 error Expired', '5 replace@20[a]', '5 watch@20']);
      expect(calls(fake)).toEqual(['0 list rv="0" limit=500', '1 watch rv="10"', '4 list rv="12"', '5 watch rv="20"']);
      expect(errorsOf(events)[0]).toMatchObject({ reason: 'Expired', status: 410, phase: 'watch' });
      expect(fake.maxActive).toBe(1);
    });
  });

  it('an ERROR event with a 410 Status after a bookmark: the watch is closed, relist at once at the last rv', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) }), cold('-(p|)', { p: listPage('30', []) })],
        watches: [cold<WatchFrame>('-b-e-a', { b: watchBookmark('25'), e: watchStatus(410, 'Expired'), a: added('late', '99') })],
      });
      const { log, events } = start(ts, fake, 5000);
      flush();
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '2 bookmark@25', '4 error Expired', '5 replace@30[]', '5 watch@30']);
      expect(calls(fake)).toEqual(['0 list rv="0" limit=500', '1 watch rv="10"', '4 list rv="25"', '5 watch rv="30"']);
      // The failed watch is closed at once (nothing after the ERROR is taken), not left open during the backoff.
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 4 });
      expect(errorsOf(events)[0]).toMatchObject({ reason: 'Expired', status: 410, phase: 'watch' });
    });
  });

  it('410 at the start of a watch (no progress): backoff, then relist', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) }), cold('-(p|)', { p: listPage('30', []) })],
        watches: [cold<WatchFrame>('-e', { e: watchStatus(410, 'Expired') })],
      });
      start(ts, fake, 5000);
      flush();
      expect(calls(fake)).toEqual(['0 list rv="0" limit=500', '1 watch rv="10"', '802 list rv="10"', '803 watch rv="30"']);
    });
  });

  it('410 at the start of a resumed watch (its rv aged out during 60 s of silence): relist at once, no backoff', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) }), cold('-(p|)', { p: listPage('30', []) })],
        watches: [cold<WatchFrame>('-'), cold<WatchFrame>('-e', { e: watchStatus(410, 'Expired') })],
      });
      start(ts, fake, 70_000);
      flush();
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '1 watch rv="10"',
        '60001 watch rv="10"',
        '60002 list rv="10"',
        '60003 watch rv="30"',
      ]);
    });
  });

  it('"Too large resource version" (504 with the ResourceVersionTooLarge cause) on a watch: after the backoff a list at the last resourceVersion, unpaged; a 504 on that list: at once at ""', () => {
    scenario(({ ts, cold, flush }) => {
      const tooLarge = {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'Too large resource version: 99, current: 20',
        reason: 'Timeout',
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
        code: 504,
      };
      const fake = fakeListWatch({
        lists: [
          cold('-(p|)', { p: listPage('99', []) }),
          cold('-#', undefined, errorFromStatus(504, tooLarge, 'list')),
          cold('-(p|)', { p: listPage('20', []) }),
        ],
        watches: [cold<WatchFrame>('-e', { e: watchEvent('ERROR', tooLarge) })],
      });
      const { events } = start(ts, fake, 5000);
      flush();
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '1 watch rv="99"',
        '802 list rv="99"',
        '803 list rv="" limit=500',
        '804 watch rv="20"',
      ]);
      expect(errorsOf(events)[0]).toMatchObject({ status: 504, phase: 'watch' });
    });
  });

  it('"Too large resource version" on a list: list again at once at resourceVersion ""', () => {
    scenario(({ ts, cold, flush }) => {
      const tooLarge = {
        kind: 'Status',
        status: 'Failure',
        message: 'Too large resource version: 99, current: 20',
        reason: 'Timeout',
        code: 504,
      };
      const fake = fakeListWatch({
        lists: [cold('-#', undefined, errorFromStatus(504, tooLarge, 'list')), cold('-(p|)', { p: listPage('20', []) })],
      });
      start(ts, fake, 50);
      flush();
      expect(calls(fake)).toEqual(['0 list rv="0" limit=500', '1 list rv="" limit=500', '2 watch rv="20"']);
    });
  });

  it('an ERROR event with another Status is a failure too (5xx: backoff and re-watch)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('-e', { e: watchStatus(500, 'InternalError') })],
      });
      const { log, events } = start(ts, fake, 1000);
      flush();
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '2 error ServerError', '802 watch@10']);
      expect(errorsOf(events)[0]).toMatchObject({ status: 500 });
    });
  });
});

// ── list failures ────────────────────────────────────────────────────────────

describe('listAndWatch: list failures', () => {
  it('410 on a list at a resourceVersion: retry at once with resourceVersion ""; a 410 at "" backs off', () => {
    scenario(({ ts, cold, flush }) => {
      const expired = httpFailure(410, 'list');
      const fake = fakeListWatch({
        lists: [cold('-#', undefined, expired), cold('-#', undefined, expired), cold('-(p|)', { p: listPage('40', []) })],
      });
      const { log } = start(ts, fake, 2000);
      flush();
      expect(calls(fake)).toEqual(['0 list rv="0" limit=500', '1 list rv="" limit=500', '802 list rv="" limit=500', '803 watch rv="40"']);
      expect(log).toEqual(['1 error Expired', '2 error Expired', '803 replace@40[]', '803 watch@40']);
    });
  });

  it('after a watch 410, a relist at the last rv that is 410 too retries at once with rv ""', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-(p|)', { p: listPage('10', []) }),
          cold('-#', undefined, httpFailure(410, 'list')),
          cold('-(p|)', { p: listPage('50', []) }),
        ],
        watches: [cold<WatchFrame>('-#', undefined, httpFailure(410))],
      });
      start(ts, fake, 3000);
      flush();
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '1 watch rv="10"',
        '802 list rv="10"',
        '803 list rv="" limit=500',
        '804 watch rv="50"',
      ]);
    });
  });

  it('410 on a continue page restarts the whole list at rv "" (continue dropped, partial items discarded)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-(p|)', { p: listPage('10', [obj('a', '1')], 't1') }),
          cold('-#', undefined, httpFailure(410, 'list')),
          cold('-(p|)', { p: listPage('60', [obj('b', '2')]) }),
        ],
      });
      const { log } = start(ts, fake, 100);
      flush();
      const [first, second, third] = fake.lists;
      expect(first?.options).toMatchObject({ resourceVersion: '0', continue: undefined });
      expect(second?.options).toMatchObject({ resourceVersion: undefined, continue: 't1' });
      expect(third?.calledAt).toBe(2);
      expect(third?.options.continue).toBeUndefined();
      expect(third?.options.resourceVersion).toBe('');
      expect(log).toEqual(['2 error Expired', '3 replace@60[b]', '3 watch@60']);
    });
  });

  it('410 on a continue page falls back to one full, unpaginated list, as client-go’s pager does (FullListIfExpired: limit unset)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-(p|)', { p: listPage('10', [obj('a', '1')], 't1') }),
          cold('-#', undefined, httpFailure(410, 'list')),
          cold('-(p|)', { p: listPage('60', [obj('b', '2')]) }),
        ],
      });
      start(ts, fake, 100);
      flush();
      expect(fake.lists[2]?.options).toEqual({ resourceVersion: '', limit: undefined, continue: undefined });
    });
  });

  it('a relist at a specific rv is not paged, unless the first list (rv "0") came back in pages', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-(p|)', { p: listPage('10', [obj('a', '1')], 't1') }),
          cold('-(p|)', { p: listPage('10', [obj('b', '1')]) }),
          cold('-(p|)', { p: listPage('20', []) }),
        ],
        watches: [cold<WatchFrame>('-#', undefined, httpFailure(410))],
      });
      start(ts, fake, 3000);
      flush();
      expect(fake.lists[2]?.options).toEqual({ resourceVersion: '10', limit: 500, continue: undefined });
    });
  });

  it('BUG: only a paged answer to the rv "0" list marks the resource as paginated (client-go reflector.list), so a paged rv "" list does not turn paging on for later relists', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          // rv "0" is answered from the watch cache in one page …
          cold('-#', undefined, httpFailure(410, 'list')),
          // … the rv "" retry goes to etcd and is paged (as any big etcd list is) …
          cold('-(p|)', { p: listPage('10', [obj('a', '1')], 't1') }),
          cold('-(p|)', { p: listPage('10', [obj('b', '1')]) }),
          cold('-(p|)', { p: listPage('20', []) }),
        ],
        watches: [cold<WatchFrame>('-#', undefined, httpFailure(410))],
      });
      start(ts, fake, 3000);
      flush();
      // … so the relist at rv 10 must stay unpaged, to be served from the watch cache.
      expect(fake.lists[3]?.options.resourceVersion).toBe('10');
      expect(fake.lists[3]?.options.limit).toBeUndefined();
    });
  });

  it('other list failures back off and list again (same rv)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-#', undefined, httpFailure(503, 'list')),
          cold('-#', undefined, networkFailure('list')),
          cold('-(p|)', { p: listPage('10', []) }),
        ],
      });
      const { log } = start(ts, fake, 5000);
      flush();
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '801 list rv="0" limit=500',
        '2402 list rv="0" limit=500',
        '2403 watch rv="10"',
      ]);
      expect(log.slice(0, 2)).toEqual(['1 error ServerError', '802 error NetworkError']);
    });
  });

  it('a list that completes without a page is an error, then backoff', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({ lists: [cold('-|'), cold('-(p|)', { p: listPage('10', []) })] });
      const { log } = start(ts, fake, 5000);
      flush();
      expect(log).toEqual(['1 error Unknown', '802 replace@10[]', '802 watch@10']);
    });
  });
});

// ── backoff ──────────────────────────────────────────────────────────────────

describe('listAndWatch: backoff', () => {
  const waitsBetweenWatches = (fake: FakeListWatch) =>
    fake.watches.slice(1).map((w, i) => w.calledAt - (fake.watches[i]?.endedAt ?? Number.NaN));

  it('5xx and network errors on a watch: waits of 800, 1600, 3200 … capped at 30 s, then re-watch from the last rv', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: Array.from({ length: 9 }, (_, i) => cold<WatchFrame>('#', undefined, i % 2 ? networkFailure() : httpFailure(500))),
      });
      start(ts, fake, 200_000);
      flush();
      expect(waitsBetweenWatches(fake)).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
      expect(fake.watches.every((w) => w.options.resourceVersion === '10')).toBe(true);
      expect(fake.lists).toHaveLength(1);
    });
  });

  it('a watch that broke after progress resumes at once; the third broken resume in a row relists instead, after the backoff', () => {
    scenario(({ ts, cold, flush }) => {
      const broken = (name: string, rv: string) => cold<WatchFrame>('-a-#', { a: added(name, rv) }, networkFailure());
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) }), cold('-(p|)', { p: listPage('20', []) })],
        watches: [broken('a', '11'), broken('b', '12'), broken('c', '13'), cold<WatchFrame>('-')],
      });
      start(ts, fake, 2000);
      flush();
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '1 watch rv="10"',
        '4 watch rv="11"',
        '7 watch rv="12"',
        '810 list rv="13"',
        '811 watch rv="20"',
      ]);
      expect(fake.maxActive).toBe(1);
    });
  });

  it('no reconnect storm: a server that drops every watch before any event gets the backoff', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: Array.from({ length: 4 }, () => cold<WatchFrame>('--#', undefined, networkFailure())),
      });
      start(ts, fake, 20_000);
      flush();
      expect(waitsBetweenWatches(fake).slice(0, 3)).toEqual([800, 1600, 3200]);
    });
  });

  it('progress resets the backoff: after a watch that delivered an event, the next failure waits 800 ms again', () => {
    scenario(({ ts, cold, flush }) => {
      const fail = () => cold<WatchFrame>('#', undefined, httpFailure(500));
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [fail(), fail(), fail(), cold<WatchFrame>('-a 5s |', { a: added('a', '11') }), fail(), fail()],
      });
      start(ts, fake, 100_000);
      flush();
      // 800, 1600, 3200; then the watch with an event ends cleanly (resume at once); then 800 again.
      expect(waitsBetweenWatches(fake).slice(0, 6)).toEqual([800, 1600, 3200, 0, 800, 1600]);
    });
  });

  it('Retry-After: 2592000 (30 days) waits 5 minutes, not a 1 ms loop (Node caps timers at 24.8 days)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-#', undefined, httpFailure(429, 'list', { retryAfterSeconds: 2_592_000 })),
          cold('-(p|)', { p: listPage('10', []) }),
        ],
      });
      start(ts, fake, 400_000);
      flush();
      expect(calls(fake).slice(0, 3)).toEqual(['0 list rv="0" limit=500', '300001 list rv="0" limit=500', '300002 watch rv="10"']);
    });
  });

  it('jitter keeps each wait in [d, 2d)', () => {
    for (const r of [0.25, 0.5, 0.999999]) {
      scenario(({ ts, cold, flush }) => {
        const fake = fakeListWatch({
          lists: [cold('-(p|)', { p: listPage('10', []) })],
          watches: Array.from({ length: 8 }, () => cold<WatchFrame>('#', undefined, httpFailure(502))),
        });
        start(ts, fake, 400_000, { random: () => r });
        flush();
        const waits = waitsBetweenWatches(fake).slice(0, 8);
        const bases = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000];
        expect(waits).toHaveLength(8);
        waits.forEach((wait, i) => {
          const d = bases[i]!;
          expect(wait).toBeCloseTo(d + r * d, 6);
          expect(wait).toBeGreaterThanOrEqual(d);
          expect(wait).toBeLessThan(2 * d);
        });
      });
    }
  });

  it('resets to 800 ms after two quiet minutes, not after one', () => {
    scenario(({ ts, cold, flush }) => {
      const fail = () => cold<WatchFrame>('#', undefined, httpFailure(500));
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [
          fail(),
          fail(),
          cold<WatchFrame>('60s #', undefined, httpFailure(500)),
          fail(),
          cold<WatchFrame>('121s #', undefined, httpFailure(500)),
          fail(),
        ],
      });
      start(ts, fake, 1_000_000, { idleTimeoutMs: 0 });
      flush();
      // (later, unscripted watches stall after 330 s each: more than two quiet minutes, so 800 again)
      expect(waitsBetweenWatches(fake).slice(0, 6)).toEqual([800, 1600, 3200, 6400, 800, 1600]);
    });
  });

  it('429 with Retry-After waits max(backoff, Retry-After) — on watch and on list', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-#', undefined, httpFailure(429, 'list', { retryAfterSeconds: 5 })), cold('-(p|)', { p: listPage('10', []) })],
        watches: [
          cold<WatchFrame>('-#', undefined, httpFailure(429, 'watch', { retryAfterSeconds: 0.5 })),
          cold<WatchFrame>('-#', undefined, httpFailure(429, 'watch', { retryAfterSeconds: 7 })),
        ],
      });
      const { log } = start(ts, fake, 30_000);
      flush();
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '5001 list rv="0" limit=500', // max(800, 5000)
        '5002 watch rv="10"',
        '6603 watch rv="10"', // max(1600, 500): re-watch, no relist
        '13604 watch rv="10"', // max(3200, 7000)
      ]);
      expect(log.filter((l) => l.includes('error'))).toEqual([
        '1 error TooManyRequests',
        '5003 error TooManyRequests',
        '6604 error TooManyRequests',
      ]);
    });
  });

  it('other watch failures (403 …) back off and relist', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) }), cold('-(p|)', { p: listPage('11', []) })],
        watches: [cold<WatchFrame>('-#', undefined, httpFailure(403))],
      });
      start(ts, fake, 5000);
      flush();
      expect(calls(fake)).toEqual(['0 list rv="0" limit=500', '1 watch rv="10"', '802 list rv="10"', '803 watch rv="11"']);
    });
  });
});

// ── frames and objects ───────────────────────────────────────────────────────

describe('listAndWatch: frames and objects', () => {
  it('unknown event types are reported and the watch goes on', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('-a-y-m', { a: added('a', '11'), y: watchEvent('SURPRISE', obj('a', '12')), m: modified('a', '13') })],
      });
      const { log } = start(ts, fake, 100);
      flush();
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '2 added a@11', '4 error UnknownEventType', '6 modified a@13']);
      expect(fake.watches).toHaveLength(1);
    });
  });

  it('a line that cannot be decoded ends the watch, which resumes at once from the last rv fully processed: the server sends the lost change again', () => {
    scenario(({ ts, cold, flush }) => {
      const bad = new InformerError('MalformedLine', 'not JSON', { phase: 'watch' });
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        // The second line (b@12) arrives mangled; the resumed watch from 11 replays it.
        watches: [
          cold<WatchFrame>('-a-x-c', { a: added('a', '11'), x: bad, c: added('c', '13') }),
          cold<WatchFrame>('-b-c', { b: added('b', '12'), c: added('c', '13') }),
        ],
      });
      const { log } = start(ts, fake, 100);
      flush();
      expect(log).toEqual([
        '1 replace@10[]',
        '1 watch@10',
        '2 added a@11',
        '4 error MalformedLine',
        '4 watch@11',
        '5 added b@12',
        '7 added c@13',
      ]);
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 4 });
      expect(fake.lists).toHaveLength(1);
    });
  });

  it("a frame that is a fault of one object (a caller's keepObject threw) is reported and the watch goes on", () => {
    scenario(({ ts, cold, flush }) => {
      const thrown = new InformerError('HandlerError', 'http.keepObject threw for b: no; kept', { phase: 'decode', key: 'b' });
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('-a-xb-c', { a: added('a', '11'), x: thrown, b: added('b', '12'), c: added('c', '13') })],
      });
      const { log } = start(ts, fake, 100);
      flush();
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '2 added a@11', '4 error HandlerError', '5 added b@12', '7 added c@13']);
      expect(fake.watches).toHaveLength(1);
    });
  });

  it('the same undecodable line again at the same rv: relist at once; a third time: relist after the backoff', () => {
    scenario(({ ts, cold, flush }) => {
      const bad = new InformerError('MalformedLine', 'not JSON', { phase: 'watch' });
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) }), cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('-x', { x: bad }), cold<WatchFrame>('-x', { x: bad }), cold<WatchFrame>('-x', { x: bad })],
      });
      start(ts, fake, 5000);
      flush();
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '1 watch rv="10"',
        '2 watch rv="10"',
        '3 list rv="10"',
        '4 watch rv="10"',
        '805 list rv="10"',
      ]);
    });
  });

  it('invalid objects are never taken for missing: a list names their keys in rejectedKeys; an invalid DELETED still deletes its key', () => {
    scenario(({ ts, cold, flush }) => {
      const Widget = kubeObject({ spec: z.object({ replicas: z.number().int().min(1) }) });
      const good = (name: string, rv: string) => obj(name, rv, { spec: { replicas: 1 } });
      const bad = (name: string, rv: string) => obj(name, rv, { spec: { replicas: 0 } });
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [good('a', '1'), bad('b', '2')]) })],
        watches: [cold<WatchFrame>('-x-d', { x: watchEvent('MODIFIED', bad('a', '11')), d: watchEvent('DELETED', bad('b', '12')) })],
      });
      const { events, log } = start(ts, fake, 100, { decode: decoder(Widget) as unknown as ListAndWatchOptions<Obj>['decode'] });
      flush();
      expect(events.find((e) => e.type === 'replace')).toMatchObject({ rejectedKeys: ['ns/b'] });
      expect(log).toEqual([
        '1 error ValidationFailed',
        '1 replace@10[a]',
        '1 watch@10',
        '2 error ValidationFailed',
        '4 error ValidationFailed',
        '4 deletedKey ns/b@12',
      ]);
    });
  });

  it('an invalid object is reported as ValidationFailed (key, issue paths), not emitted, and its resourceVersion still counts', () => {
    scenario(({ ts, cold, flush }) => {
      const Widget = kubeObject({ spec: z.object({ replicas: z.number().int().min(1) }) });
      const good = (name: string, rv: string) => obj(name, rv, { spec: { replicas: 1 } });
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [good('a', '1'), obj('b', '2', { spec: { replicas: 'many' } })]) })],
        watches: [
          cold<WatchFrame>('-x-(y|)', {
            x: watchEvent('MODIFIED', obj('a', '11', { spec: { replicas: 0 } })),
            y: watchEvent('ADDED', obj('c', '12', { spec: {} })),
          }),
        ],
      });
      const { log, events } = start(ts, fake, 100, { decode: decoder(Widget) as unknown as ListAndWatchOptions<Obj>['decode'] });
      flush();
      expect(log).toEqual([
        '1 error ValidationFailed',
        '1 replace@10[a]',
        '1 watch@10',
        '2 error ValidationFailed',
        '4 error ValidationFailed',
        '4 watch@12',
      ]);
      const [inList, inWatch, noReplicas] = errorsOf(events);
      expect(inList).toMatchObject({ reason: 'ValidationFailed', phase: 'list', key: 'ns/b', resourceVersion: '2' });
      expect(inList?.issues?.map((i) => i.path)).toEqual([['spec', 'replicas']]);
      expect(inWatch).toMatchObject({ phase: 'watch', key: 'ns/a', resourceVersion: '11' });
      expect(inWatch?.issues?.map((i) => i.path)).toEqual([['spec', 'replicas']]);
      expect(noReplicas?.issues?.map((i) => i.path)).toEqual([['spec', 'replicas']]);
      // Both invalid events count as events (so no VeryShortWatch) and moved the rv on: the re-watch starts at 12.
      expect(fake.watches[1]?.options.resourceVersion).toBe('12');
    });
  });
});

// ── stalls ───────────────────────────────────────────────────────────────────

describe('listAndWatch: stalled watches', () => {
  it('with the DEFAULT options a watch silent for 60 s is ended and resumed at once from the same rv: no error, no backoff, no relist', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('-'), cold<WatchFrame>('-')],
      });
      const { log } = start(ts, fake, 125_000);
      flush();
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 60_001 });
      expect(log).toEqual(['1 replace@10[]', '1 watch@10', '60001 watch@10', '120001 watch@10']);
      expect(fake.lists).toHaveLength(1);
    });
  });

  it('streaming list (watchList): the 60 s idle rule starts at the initial-events-end bookmark, and a streaming list broken midway relists after the backoff', () => {
    scenario(({ ts, cold, flush }) => {
      const end = watchEvent('BOOKMARK', { metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } });
      const fake = fakeListWatch({
        watches: [
          cold<WatchFrame>('-a-#', { a: added('a', '11') }, networkFailure()), // broken after one initial event
          cold<WatchFrame>('-a-e', { a: added('a', '11'), e: end }), // then silent
          cold<WatchFrame>('-'),
        ],
      });
      const { log } = start(ts, fake, 70_000, { watchList: true });
      flush();
      // Streamed again from the last synced resourceVersion (none yet), not from an initial object's (client-go's watchList).
      expect(log).toEqual(['0 watch@', '3 error NetworkError', '803 watch@', '806 replace@12[a]', '60806 watch@12']);
      expect(fake.watches[0]?.options).toMatchObject({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' });
      expect(fake.watches[2]?.options).toMatchObject({ resourceVersion: '12', allowWatchBookmarks: true });
      expect(fake.lists).toHaveLength(0);
    });
  });

  // The transport ends a streaming list past http.maxListTotalBytes with ListTooLong (spec/resilience/hostile/
  // streamingBudget.spec.ts: over real HTTP); here, at the DEFAULT options, what follows it in virtual time.
  it("streaming list past the list budget (the transport's ListTooLong): reported, then streamed again after the default backoff", () => {
    scenario(({ ts, cold, flush }) => {
      const end = watchEvent('BOOKMARK', { metadata: { resourceVersion: '12', annotations: { 'k8s.io/initial-events-end': 'true' } } });
      const tooLong = new InformerError('ListTooLong', 'the streaming list is larger than the 512 MiB limit for a whole list', {
        phase: 'watch',
      });
      const fake = fakeListWatch({
        watches: [
          cold<WatchFrame>('-a-#', { a: added('a', '11') }, tooLong),
          cold<WatchFrame>('-a-e', { a: added('a', '11'), e: end }),
          cold<WatchFrame>('-'),
        ],
      });
      const { log } = start(ts, fake, 10_000, { watchList: true });
      flush();
      expect(log).toEqual(['0 watch@', '3 error ListTooLong', '803 watch@', '806 replace@12[a]']);
      expect(fake.watches[1]?.options).toMatchObject({ sendInitialEvents: true });
      expect(fake.lists).toHaveLength(0);
    });
  });

  it('with the DEFAULT options any frame restarts the 60 s idle clock; a stall after events is noticed 60 s after the last frame', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [
          cold<WatchFrame>('50s a 50s b', { a: watchBookmark('11'), b: added('x', '12') }),
          cold<WatchFrame>('-a', { a: added('y', '13') }),
        ],
      });
      const { log } = start(ts, fake, 200_000);
      flush();
      // frames at 50 001 and 100 002, then silence: resumed at 160 002 from rv 12.
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 160_002 });
      expect(log.slice(-2)).toEqual(['160002 watch@12', '160003 added y@13']);
    });
  });

  describe('the adaptive idle rule (DEFAULT options: busyIdleTimeoutMs 15 s, idleTimeoutMs 60 s)', () => {
    /** A watch that sends a MODIFIED at each of `times` (ms after it opens), rv 100, 101 …, then stays open and silent. */
    const paced = (times: readonly number[]): Observable<WatchFrame> =>
      merge(...times.map((t, i) => timer(t).pipe(map(() => modified('x', String(100 + i))))), NEVER);
    /** Times from gaps: the first event `gaps[0]` ms after the watch opens. */
    const at = (gaps: readonly number[]) => gaps.map((_, i) => gaps.slice(0, i + 1).reduce((a, b) => a + b, 0));

    it('a busy watch (an event every 200 ms) that stalls is resumed 15 s after its last event, from its rv, not as a failure', () => {
      scenario(({ ts, cold, flush }) => {
        const times = at(Array.from({ length: 150 }, () => 200)); // 30 s of churn
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })], watches: [paced(times)] });
        const { events } = start(ts, fake, 120_000);
        flush();
        const lastEventAt = 1 + times[times.length - 1]!;
        expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: lastEventAt + 15_000 });
        expect(fake.watches[1]).toMatchObject({ calledAt: lastEventAt + 15_000 });
        expect(fake.watches[1]!.calledAt - lastEventAt).toBeLessThanOrEqual(20_000);
        expect(fake.watches[1]!.options.resourceVersion).toBe(String(100 + times.length - 1));
        expect(errorsOf(events)).toEqual([]);
        // The resumed watch is silent too: the churn may have stopped, so it waits the full 60 s.
        expect(fake.watches[2]?.calledAt).toBe(lastEventAt + 15_000 + 60_000);
        expect(fake.watches).toHaveLength(3);
      });
    });

    it('a quiet watch (an event every 20 s, then silence) is not resumed before 60 s of silence', () => {
      scenario(({ ts, cold, flush }) => {
        const times = at([20_000, 20_000, 20_000, 20_000]);
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })], watches: [paced(times)] });
        start(ts, fake, 250_000);
        flush();
        const lastEventAt = 1 + times[times.length - 1]!;
        expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: lastEventAt + 60_000 });
        expect(fake.watches.map((w) => w.calledAt)).toEqual([1, lastEventAt + 60_000, lastEventAt + 120_000]);
      });
    });

    it('a watch with no event at all is resumed once a minute, however busy it was before a resume with no event', () => {
      scenario(({ ts, cold, flush }) => {
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })] });
        start(ts, fake, 300_000);
        flush();
        expect(fake.watches.map((w) => w.calledAt)).toEqual([1, 60_001, 120_001, 180_001, 240_001]);
      });
    });

    it('a watch that slows down gradually (gaps from 200 ms growing by half each time up to 50 s) is never resumed in between', () => {
      scenario(({ ts, cold, flush }) => {
        const gaps: number[] = [];
        for (let gap = 200; gap <= 50_000; gap = Math.round(gap * 1.5)) gaps.push(gap);
        const times = at(gaps);
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })], watches: [paced(times)] });
        const lastEventAt = 1 + times[times.length - 1]!;
        const { events } = start(ts, fake, lastEventAt + 100_000);
        flush();
        expect(gaps.length).toBeGreaterThan(10);
        expect(events.filter((e) => e.type === 'modified')).toHaveLength(times.length);
        // One watch through the whole slowdown; then, quiet, the 60 s rule.
        expect(fake.watches.map((w) => w.calledAt)).toEqual([1, lastEventAt + 60_000]);
      });
    });

    it('a burst then silence costs one early resume, then the 60 s rule (no resume every 15 s)', () => {
      scenario(({ ts, cold, flush }) => {
        const times = at(Array.from({ length: 20 }, () => 50));
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })], watches: [paced(times)] });
        start(ts, fake, 300_000);
        flush();
        const last = 1 + times[times.length - 1]!;
        expect(fake.watches.map((w) => w.calledAt)).toEqual([
          1,
          last + 15_000,
          last + 75_000,
          last + 135_000,
          last + 195_000,
          last + 255_000,
        ]);
      });
    });

    it('a busy watch resumed after a stall is busy again at its first events: a second stall is resumed within 15 s too', () => {
      scenario(({ ts, cold, flush }) => {
        const busy = at(Array.from({ length: 50 }, () => 100));
        const fake = fakeListWatch({
          lists: [cold('-(p|)', { p: listPage('10', []) })],
          watches: [paced(busy), paced([1, 2, 3])],
        });
        start(ts, fake, 200_000);
        flush();
        const first = 1 + busy[busy.length - 1]!;
        expect(fake.watches[1]?.calledAt).toBe(first + 15_000);
        expect(fake.watches[2]?.calledAt).toBe(first + 15_000 + 3 + 15_000);
      });
    });

    it('busyIdleTimeoutMs: 0 turns it off: a busy watch that stalls waits idleTimeoutMs', () => {
      scenario(({ ts, cold, flush }) => {
        const times = at(Array.from({ length: 50 }, () => 200));
        const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })], watches: [paced(times)] });
        start(ts, fake, 100_000, { busyIdleTimeoutMs: 0 });
        flush();
        expect(fake.watches[1]?.calledAt).toBe(1 + times[times.length - 1]! + 60_000);
      });
    });
  });

  it('a watch that delivers nothing for timeoutSeconds·1000 + stallMarginMs (idle rule off) is aborted and resumed (after backoff)', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })], watches: [cold<WatchFrame>('-')] });
      const { log } = start(ts, fake, 331_000, { minWatchTimeoutSeconds: 60, stallMarginMs: 5000, idleTimeoutMs: 0 });
      flush();
      // started at 1; 60 s + 5 s of silence → aborted at 65 001, resumed 800 ms later.
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 65_001 });
      expect(log.slice(0, 4)).toEqual(['1 replace@10[]', '1 watch@10', '65001 error Timeout', '65801 watch@10']);
      expect(fake.watches[1]?.options.resourceVersion).toBe('10');
      expect(fake.lists).toHaveLength(1);
    });
  });

  it('any frame restarts the stall clock', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('40s a', { a: watchBookmark('11') })],
      });
      start(ts, fake, 200_000, { minWatchTimeoutSeconds: 60, stallMarginMs: 5000, idleTimeoutMs: 0 });
      flush();
      // last frame at 40 001 → stalled at 105 001
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 105_001 });
      expect(fake.watches[1]?.options.resourceVersion).toBe('11');
    });
  });

  it('with the idle rule off and the default timeout and margin (300 s, 30 s) a silent watch is aborted at 330 s', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', []) })] });
      start(ts, fake, 400_000, { idleTimeoutMs: 0 });
      flush();
      expect(fake.watches[0]?.unscripted).toBe(true);
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 330_001 });
      expect(fake.watches[1]?.calledAt).toBe(330_801);
    });
  });

  it('bookmarkTimeoutMs: a watch that brings no bookmark for that long is aborted even if events flow', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('20s b 20s a 20s a 20s a', { b: watchBookmark('11'), a: added('x', '12') })],
      });
      const { log } = start(ts, fake, 100_000, { bookmarkTimeoutMs: 30_000 });
      flush();
      // bookmark at 20 001, then events only: aborted 30 s after the bookmark.
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 50_001 });
      expect(log).toContain('50001 error Timeout');
      expect(fake.watches[1]?.options.resourceVersion).toBe('12');
    });
  });
});

// ── teardown ─────────────────────────────────────────────────────────────────

describe('listAndWatch: teardown', () => {
  for (const [phase, untilMs] of [
    ['during the list', 1],
    ['during a watch', 10],
    ['during a backoff wait', 100],
  ] as const) {
    it(`unsubscribing ${phase} closes the request and clears every timer`, () => {
      scenario(({ ts, cold, flush }) => {
        const fake = fakeListWatch({
          lists: [cold('--(p|)', { p: listPage('10', []) })],
          watches: [cold<WatchFrame>('-a-a 30ms #', { a: added('x', '11') }, httpFailure(500))],
        });
        start(ts, fake, untilMs);
        let pending = -1;
        let active = -1;
        ts.schedule(() => {
          pending = ts.actions.length;
          active = fake.active;
        }, untilMs);
        flush();
        expect(active).toBe(0);
        expect(pending).toBe(0);
        expect(fake.requests.every((r) => !r.open)).toBe(true);
        expect(fake.maxActive).toBe(1);
      });
    });
  }

  it('BUG: a subscriber that leaves synchronously on the replace (take) leaves no watch open and no timer behind', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', [obj('a', '1')]) })] });
      const seen: string[] = [];
      listAndWatch<Obj>(fake, { decode: decoder(KubeObject), scheduler: ts, random: () => 0 })
        .pipe(take(1))
        .subscribe((e) => seen.push(summary(e)));
      let pending = -1;
      let active = -1;
      ts.schedule(() => {
        pending = ts.actions.length;
        active = fake.active;
      }, 5);
      flush();
      expect(seen).toEqual(['replace@10[a]']);
      // listAndWatch.ts goes on after emit() (list → resume(), watch() → run()) even though the subscriber is closed:
      // a watch is opened after teardown, and its stall timer keeps reopening it forever.
      expect(active).toBe(0);
      expect(fake.watches).toHaveLength(0);
      expect(pending).toBe(0);
    });
  });

  it('BUG: a subscriber that leaves synchronously on an error event leaves no backoff timer (and no later request) behind', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({ lists: [cold('-#', undefined, httpFailure(500, 'list'))] });
      listAndWatch<Obj>(fake, { decode: decoder(KubeObject), scheduler: ts, random: () => 0 })
        .pipe(take(1))
        .subscribe();
      let pending = -1;
      ts.schedule(() => (pending = ts.actions.length), 5);
      flush();
      expect(pending).toBe(0);
      expect(fake.lists).toHaveLength(1);
    });
  });

  it('never has more than one request open, across relists, re-watches and backoffs', () => {
    scenario(({ ts, cold, flush }) => {
      const fake = fakeListWatch({
        lists: [
          cold('-(p|)', { p: listPage('10', [], 't') }),
          cold('-(p|)', { p: listPage('10', []) }),
          cold('-#', undefined, httpFailure(410, 'list')),
          cold('-(p|)', { p: listPage('30', []) }),
        ],
        watches: [
          cold<WatchFrame>('-a-(b|)', { a: added('a', '11'), b: watchBookmark('12') }),
          cold<WatchFrame>('-a-e-a', { a: added('b', '13'), e: watchStatus(410) }),
          cold<WatchFrame>('-|'),
          cold<WatchFrame>('-a 10ms #', { a: modified('b', '31') }, networkFailure()),
        ],
      });
      const { log } = start(ts, fake, 20_000);
      flush();
      expect(fake.maxActive).toBe(1);
      expect(calls(fake)).toEqual([
        '0 list rv="0" limit=500',
        '1 list rv=- limit=500 continue=t',
        '2 watch rv="10"',
        '5 watch rv="12"', // clean end after an event: at once, from the bookmark's rv
        '8 list rv="13" limit=500', // ERROR 410 after progress → relist at once at the last rv (paged: the first list was)
        '9 list rv="" limit=500', // 410 on that list → at once, from the latest state
        '10 watch rv="30"',
        '811 watch rv="30"', // very short watch → backoff 800 (progress had reset it)
        '823 watch rv="31"', // network error after an event → resume at once
        '15823 watch rv="31"', // a busy type (events ms apart) silent for busyIdleTimeoutMs (15 s) → resume at once
      ]);
      expect(log).toEqual([
        '2 replace@10[]',
        '2 watch@10',
        '3 added a@11',
        '5 bookmark@12',
        '5 watch@12',
        '6 added b@13',
        '8 error Expired',
        '9 error Expired',
        '10 replace@30[]',
        '10 watch@30',
        '11 error VeryShortWatch',
        '811 watch@30',
        '812 modified b@31',
        '823 error NetworkError',
        '823 watch@31',
        '15823 watch@31',
      ]);
    });
  });
});
