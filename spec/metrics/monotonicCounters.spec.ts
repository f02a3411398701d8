/**
 * A summed counter on `/metrics` never goes down while its series lives: Prometheus reads a drop as a reset, and
 * rate() or increase() count the whole remaining total again. audit39 found two drops: an informer leaving a label
 * summed over several (the CLI's `watch pods -n a,b` detaching a namespace it may not read, `factory.forget`) took its
 * counts with it; and past `maxResourceSeries`, the first resource leaving moved another out of `_other`. An informer
 * that leaves now leaves its counters on its label (`ResourceSeries`), and a resource under `_other` stays there.
 * Virtual time for the informers (default options), real HTTP for the scrapes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NEVER, VirtualAction, VirtualTimeScheduler, of, type Subscription } from 'rxjs';
import { customResource, informer, Pod, type KubeObject } from '../../src/index.ts';
import { serve } from '../../src/metrics/index.ts';
import { OTHER_RESOURCES, ResourceSeries } from '../../src/metrics/aggregate.ts';
import { ServedInformers } from '../../src/cli/served.ts';
import { kubeObj, listPage } from '../../src/testing/index.ts';
import { parseExposition } from './exposition.ts';

type Families = ReturnType<typeof parseExposition>;
const value = (fs: Families, family: string, labels: Record<string, string>) =>
  fs.find((f) => f.name === family)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('counters stay monotonic when an informer leaves the served set (audit39)', () => {
  const subscriptions: Subscription[] = [];
  afterEach(() => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
  });

  async function serving(set: ServedInformers, scheduler: VirtualTimeScheduler, maxResourceSeries?: number) {
    let url = '';
    subscriptions.push(serve(set, { host: '127.0.0.1', scheduler, maxResourceSeries }).subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    return async () => parseExposition(await (await fetch(`${url}/metrics`)).text());
  }

  it("watch pods -n a,b, b detached: lists, events and handler durations of pods keep b's counts", async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const inNamespace = (ns: string) =>
      informer<KubeObject>(
        {
          list: () =>
            of(
              listPage(
                '5',
                [1, 2, 3].map((n) => kubeObj(`p${n}`, { namespace: ns, kind: 'Pod', resourceVersion: '5' })),
              ),
            ),
          watch: () => NEVER,
        },
        Pod as never,
        { scheduler, namespace: ns },
      );
    const [a, b] = [inNamespace('a'), inNamespace('b')];
    subscriptions.push(
      a.on(() => undefined),
      b.on(() => undefined),
    );
    const set = new ServedInformers();
    set.attach(1, a);
    set.attach(2, b);
    const scrape = await serving(set, scheduler);
    scheduler.flush();
    const counters = (fs: Families) => [
      value(fs, 'reflector_lists_total', { name: 'pods' }),
      value(fs, 'reflector_watches_total', { name: 'pods' }),
      value(fs, 'informer_events_total', { name: 'pods', type: 'added' }),
      fs.find((f) => f.name === 'informer_handler_duration_seconds')?.samples.find((s) => s.name.endsWith('_count'))?.value,
    ];
    expect(counters(await scrape())).toEqual([2, 2, 6, 6]);
    set.detach(2);
    const after = await scrape();
    expect(counters(after)).toEqual([2, 2, 6, 6]);
    expect(value(after, 'informer_store_objects', { name: 'pods' })).toBe(3); // a gauge: what is served now
    // The resource's last informer gone: its series (and what it left) go with it.
    set.detach(1);
    expect(value(await scrape(), 'reflector_lists_total', { name: 'pods' })).toBeUndefined();
  });

  it('maxResourceSeries 1: the first resource detached, "_other" keeps its sums and its members; the freed label goes to a new resource', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const crd = (plural: string) => {
      const resource = customResource({ group: 'x.io', version: 'v1', plural, kind: plural.toUpperCase(), namespaced: true });
      return informer<KubeObject>(
        { list: () => of(listPage('5', [kubeObj('a', { kind: resource.kind, resourceVersion: '5' })])), watch: () => NEVER },
        resource,
        { scheduler },
      );
    };
    const set = new ServedInformers();
    ['r1s', 'r2s', 'r3s'].forEach((plural, i) => set.attach(i, crd(plural)));
    const scrape = await serving(set, scheduler, 1);
    scheduler.flush();
    const names = (fs: Families) => fs.find((f) => f.name === 'reflector_lists_total')!.samples.map((s) => [s.labels['name'], s.value]);
    expect(names(await scrape())).toEqual([
      ['r1s.x.io', 1],
      [OTHER_RESOURCES, 2],
    ]);
    set.detach(0);
    expect(names(await scrape())).toEqual([[OTHER_RESOURCES, 2]]);
    set.attach(3, crd('r4s'));
    scheduler.flush();
    expect(names(await scrape())).toEqual([
      [OTHER_RESOURCES, 2],
      ['r4s.x.io', 1],
    ]);
    set.detach(1); // r2s leaves "_other": its list stays in the sum
    expect(names(await scrape())).toEqual([
      [OTHER_RESOURCES, 2],
      ['r4s.x.io', 1],
    ]);
  });
});

describe('ResourceSeries', () => {
  const left = (lists: number) => ({
    eventsTotal: { added: lists, updated: 0, deleted: 0 },
    listsTotal: lists,
    watchesTotal: 0,
    shortWatchesTotal: 0,
    errorsTotal: { Timeout: lists },
    handlerSeconds: { count: lists, sumSeconds: lists / 10 },
  });

  it('gives a label once: a resource under "_other" stays there while served, a freed label goes to the next newcomer', () => {
    const series = new ResourceSeries(1);
    expect(['a', 'b', 'c', 'a'].map((n) => series.join(n))).toEqual(['a', OTHER_RESOURCES, OTHER_RESOURCES, 'a']);
    series.leave('a', left(1));
    expect(series.label('a')).toBe('a'); // one informer of a is still served
    series.leave('a', left(1));
    expect([series.label('b'), series.label('c'), series.others]).toEqual([OTHER_RESOURCES, OTHER_RESOURCES, 2]);
    expect(series.join('d')).toBe('d');
  });

  it('keeps what a leaving informer counted on its label while the label has informers, and adds them up', () => {
    const series = new ResourceSeries(1);
    ['a', 'a', 'b', 'c', 'c'].forEach((n) => series.join(n));
    series.leave('a', left(2));
    series.leave('b', left(3));
    series.leave('c', left(4));
    expect(series.offsetOf('a')).toEqual(left(2));
    expect(series.offsetOf(OTHER_RESOURCES)).toEqual(left(7));
    series.leave('a', left(1));
    series.leave('c', left(1));
    expect([series.offsetOf('a'), series.offsetOf(OTHER_RESOURCES)]).toEqual([undefined, undefined]);
  });
});
