/**
 * A whole list's time is bounded (`maxListDurationMs`, default one hour), in virtual time at default options: a
 * server whose every page (or streaming list event) comes just within its own waits otherwise kept an informer
 * "listing", never synced and silent, for days (10,000 pages of ~89 s: audit52). A real long list still completes.
 */
import { describe, expect, it } from 'vitest';
import { asyncScheduler, defer, interval, map, NEVER, timer, type Observable } from 'rxjs';
import { KubeObject } from '../../src/index.ts';
import type { ListOptions, ListPage, ListWatch, WatchFrame, WatchOptions } from '../../src/1-transport/listWatch.ts';
import { MAX_LIST_DURATION_MS } from '../../src/2-source/listAndWatch.ts';
import { decoder, listAndWatch, type ListAndWatchOptions, type SourceEvent } from '../../src/pipeline.ts';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';

const widget: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' } };

/** A server whose list pages come `pageMs` after each request; watches are `watch`'s (never answered by default). */
function server(
  pageMs: number,
  pageFor: (options: ListOptions, n: number) => ListPage,
  watch: (options: WatchOptions) => Observable<WatchFrame> = () => NEVER,
): ListWatch & { readonly lists: ListOptions[]; readonly at: number[]; readonly watches: WatchOptions[] } {
  const lists: ListOptions[] = [];
  const at: number[] = [];
  const watches: WatchOptions[] = [];
  return {
    lists,
    at,
    watches,
    list: (options) =>
      defer(() => {
        lists.push(options);
        at.push(asyncScheduler.now());
        return timer(pageMs).pipe(map(() => pageFor(options, lists.length)));
      }),
    watch: (options) => {
      watches.push(options);
      return watch(options);
    },
  };
}

/** Subscribes at frame 0 with default options (random 0), unsubscribes at `untilMs`; the events, with their times. */
function run(
  fake: ListWatch,
  untilMs: number,
  options: Partial<ListAndWatchOptions<KubeObject>> = {},
): { events: SourceEvent<KubeObject>[]; times: number[] } {
  const ts = leakCheckingScheduler(untilMs + 1);
  const events: SourceEvent<KubeObject>[] = [];
  const times: number[] = [];
  ts.run(() => {
    const subscription = listAndWatch<KubeObject>(fake, { decode: decoder(KubeObject), random: () => 0, ...options }).subscribe((event) => {
      events.push(event);
      times.push(ts.now());
    });
    ts.schedule(() => subscription.unsubscribe(), untilMs);
  });
  return { events, times };
}

const errors = (events: SourceEvent<KubeObject>[]) => events.flatMap((e) => (e.type === 'error' ? [e.error] : []));

describe('listAndWatch: a whole list has a time budget (maxListDurationMs)', () => {
  it('is one hour by default', () => expect(MAX_LIST_DURATION_MS).toBe(3_600_000));

  it('a chain of pages each ~89 s (just within every per-page wait) is ListTooLong at the first page past one hour, relisted after the backoff', () => {
    const fake = server(89_000, (_, n) => ({ items: [widget], resourceVersion: '10', continue: `t${n}` }));
    const { events, times } = run(fake, 4_000_000);
    const [first] = errors(events);
    expect(first?.reason).toBe('ListTooLong');
    // First page at 89 s; page 42 at 3,738 s is 3,649 s after it: past 3,600 s.
    expect(first?.message).toBe(
      'the list went on past maxListDurationMs 3600000 (60 min 49 s since its first page, 42 pages, 42 objects); ' +
        'relisting after the backoff (option maxListDurationMs)',
    );
    expect(times[events.findIndex((e) => e.type === 'error')]).toBe(42 * 89_000);
    expect(fake.lists[42]).toEqual({ resourceVersion: '0', limit: 500, continue: undefined });
    expect(fake.at[42]).toBe(42 * 89_000 + 800);
    expect(events.some((e) => e.type === 'replace')).toBe(false);
  });

  it('a long real list (1,000,000 objects in 2,000 pages of 1.5 s: 50 min) completes', () => {
    const page = Array.from({ length: 500 }, () => widget);
    const fake = server(1_500, (_, n) => ({ items: page, resourceVersion: '10', ...(n < 2_000 ? { continue: `t${n}` } : {}) }));
    const { events } = run(fake, 3_100_000);
    expect(errors(events)).toEqual([]);
    const replace = events.find((e) => e.type === 'replace');
    expect(replace?.type === 'replace' && replace.items.length).toBe(1_000_000);
  });

  it('0 turns it off; another value is used as given', () => {
    const endless = () => server(89_000, (_, n) => ({ items: [widget], resourceVersion: '10', continue: `t${n}` }));
    expect(errors(run(endless(), 4_000_000, { maxListDurationMs: 0 }).events)).toEqual([]);
    const { events, times } = run(endless(), 400_000, { maxListDurationMs: 100_000 });
    expect(errors(events)[0]?.message).toContain('past maxListDurationMs 100000 (2 min 58 s since its first page, 3 pages, 3 objects)');
    expect(times[0]).toBe(3 * 89_000);
  });

  it('a streaming list whose initial events come every 29 s without the bookmark is ListTooLong one hour after its request', () => {
    const initial = (): Observable<WatchFrame> =>
      interval(29_000).pipe(map((n) => ({ type: 'ADDED', object: { ...widget, metadata: { ...widget.metadata, name: `w${n}` } } })));
    const fake = server(1, () => ({ items: [], resourceVersion: '10' }), initial);
    const { events, times } = run(fake, 3_700_000, { watchList: true });
    const [first] = errors(events);
    expect(first?.reason).toBe('ListTooLong');
    expect(first?.message).toBe(
      'the streaming list went on past maxListDurationMs 3600000 (60 min, 124 initial events without the initial-events-end ' +
        'bookmark); relisting after the backoff (option maxListDurationMs)',
    );
    expect(times[events.findIndex((e) => e.type === 'error')]).toBe(3_600_000);
    expect(fake.watches[0]).toMatchObject({ sendInitialEvents: true });
  });
});
