/**
 * Continue chains are bounded (issue #21), in virtual time at default options: a
 * server that repeats a continue token, or never ends the chain, costs one
 * `ListTooLong` error and a relist after the backoff, never unbounded memory.
 */
import { describe, expect, it } from 'vitest';
import { asyncScheduler, defer, map, timer, type Observable } from 'rxjs';
import { KubeObject } from '../../src/index.ts';
import type { ListOptions, ListPage, ListWatch, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { MAX_LIST_OBJECTS, MAX_LIST_PAGES } from '../../src/2-source/listAndWatch.ts';
import { decoder, listAndWatch, type ListAndWatchOptions, type ListProgress, type SourceEvent } from '../../src/pipeline.ts';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';

const widget: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' } };

/** A server whose lists answer each page 1 ms later with `pageFor(options, n)` (n: the request's number); watches never answer. */
function server(
  pageFor: (options: ListOptions, n: number) => ListPage,
): ListWatch & { readonly lists: ListOptions[]; readonly at: number[] } {
  const lists: ListOptions[] = [];
  const at: number[] = [];
  return {
    lists,
    at,
    list: (options) =>
      defer(() => {
        lists.push(options);
        at.push(asyncScheduler.now());
        return timer(1).pipe(map(() => pageFor(options, lists.length)));
      }),
    watch: (): Observable<WatchFrame> => timer(3_600_000).pipe(map(() => ({ type: 'BOOKMARK', object: {} }))),
  };
}

/** Subscribes at frame 0 with default options (random 0), unsubscribes at `untilMs`; the events, with their times. */
function run(
  fake: ListWatch & { at: number[] },
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

describe('listAndWatch: continue chains are bounded', () => {
  it('an onListProgress that throws is reported as a HandlerError, and the list goes on', () => {
    const fake = server((_, n) =>
      n < 2 ? { items: [widget], resourceVersion: '10', continue: `t${n}` } : { items: [widget], resourceVersion: '10' },
    );
    const { events } = run(fake, 100, {
      onListProgress: () => {
        throw new Error('boom');
      },
    });
    expect(errors(events).map((e) => `${e.reason}: ${e.message}`)).toEqual(['HandlerError: onListProgress threw: boom']);
    expect(events.find((e) => e.type === 'replace')).toMatchObject({ type: 'replace', items: [widget, widget] });
  });

  it('a repeated continue token is ListTooLong at once; the relist comes after the backoff (800 ms)', () => {
    const fake = server(() => ({ items: [widget], resourceVersion: '10', continue: 'same' }));
    const { events, times } = run(fake, 2_000);
    const [first] = errors(events);
    expect(first?.reason).toBe('ListTooLong');
    expect(first?.message).toContain('repeated a continue token (after 2 pages, 2 objects)');
    expect(times[0]).toBe(2);
    // Page 1 at rv "0", page 2 with the token (repeated): error; 800 ms later a fresh list at rv "0".
    expect(fake.lists.slice(0, 3)).toEqual([
      { resourceVersion: '0', limit: 500, continue: undefined },
      { resourceVersion: undefined, limit: 500, continue: 'same' },
      { resourceVersion: '0', limit: 500, continue: undefined },
    ]);
    expect(fake.at.slice(0, 3)).toEqual([0, 1, 802]);
    expect(events.some((e) => e.type === 'replace')).toBe(false);
  });

  it('a repeated long continue token (remembered by its hash) is ListTooLong too; long distinct ones are not', () => {
    const long = (n: number) => `${'x'.repeat(10_000)}${n}`;
    const fake = server((_, n) => ({ items: [widget], resourceVersion: '10', continue: long(n < 4 ? n : 2) }));
    const { events } = run(fake, 500);
    const [first] = errors(events);
    expect(first?.reason).toBe('ListTooLong');
    expect(first?.message).toContain('repeated a continue token (after 4 pages, 4 objects)');
  });

  it(`a chain that never ends is ListTooLong after maxListPages (${MAX_LIST_PAGES}) empty pages, then relisted after the backoff`, () => {
    const fake = server((_, n) => ({ items: [], resourceVersion: '10', continue: `t${n}` }));
    const { events, times } = run(fake, MAX_LIST_PAGES + 1_000);
    const [first] = errors(events);
    expect(first?.reason).toBe('ListTooLong');
    expect(first?.message).toContain(`past maxListPages ${MAX_LIST_PAGES} (10,000 pages, 0 objects)`);
    expect(times[0]).toBe(MAX_LIST_PAGES);
    expect(fake.lists[MAX_LIST_PAGES]).toEqual({ resourceVersion: '0', limit: 500, continue: undefined });
    expect(fake.at[MAX_LIST_PAGES]).toBe(MAX_LIST_PAGES + 800);
  });

  it(`a chain of full pages is ListTooLong past maxListObjects (${MAX_LIST_OBJECTS.toLocaleString('en-US')})`, () => {
    const page = Array.from({ length: 500 }, () => widget);
    const fake = server((_, n) => ({ items: page, resourceVersion: '10', continue: `t${n}` }));
    const { events } = run(fake, 3_000);
    const [first] = errors(events);
    expect(first?.reason).toBe('ListTooLong');
    expect(first?.message).toContain('past maxListObjects 1000000 (2,001 pages, 1,000,500 objects)');
    expect(fake.lists[2001]).toEqual({ resourceVersion: '0', limit: 500, continue: undefined });
  });

  it('a chain that ends within the bounds lists as before, telling onListProgress after every page but the last', () => {
    const fake = server((_, n) =>
      n < 3 ? { items: [widget], resourceVersion: '10', continue: `t${n}` } : { items: [widget], resourceVersion: '10' },
    );
    const progress: ListProgress[] = [];
    const { events } = run(fake, 100, { onListProgress: (p) => progress.push(p) });
    expect(progress).toEqual([
      { pages: 1, objects: 1 },
      { pages: 2, objects: 2 },
    ]);
    expect(errors(events)).toEqual([]);
    expect(events.find((e) => e.type === 'replace')).toMatchObject({ type: 'replace', resourceVersion: '10' });
  });
});
