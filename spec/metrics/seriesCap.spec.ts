/**
 * `/metrics` has series for at most `maxResourceSeries` (200) resources (src/metrics/aggregate.ts, `resourceLabels`;
 * serve.ts): a cluster's CustomResourceDefinitions (`--all`, the dynamic factory) must not grow the series without
 * bound. Past the cap, resources are one `name="_other"`, summed (or their worst shown), with a `#` comment. The other
 * labels are the library's own: `type` (3), `reason` (the `ErrorReason`s), `encoding` and `stage`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NEVER, VirtualAction, VirtualTimeScheduler, firstValueFrom, of, type Subscription } from 'rxjs';
import { customResource, informer, type KubeObject } from '../../src/index.ts';
import { serve } from '../../src/metrics/index.ts';
import { DEFAULT_MAX_RESOURCE_SERIES, OTHER_RESOURCES, resourceLabels } from '../../src/metrics/aggregate.ts';
import { toResource, watchableResources } from '../../src/discovery/index.ts';
import { discoverWith } from '../../src/discovery/discovery.ts';
import { kubeObj, listPage } from '../../src/testing/index.ts';
import { parseExposition } from './exposition.ts';

const CRDS = 250;

/** Discovery of a cluster with `CRDS` custom resources in one group (a fake server's documents). */
function fakeDiscovery() {
  const group = 'crd.example.com';
  const documents: Record<string, unknown> = {
    '/api': { kind: 'APIVersions', versions: [] },
    '/apis': {
      kind: 'APIGroupList',
      groups: [
        {
          name: group,
          versions: [{ groupVersion: `${group}/v1`, version: 'v1' }],
          preferredVersion: { groupVersion: `${group}/v1`, version: 'v1' },
        },
      ],
    },
    [`/apis/${group}/v1`]: {
      kind: 'APIResourceList',
      groupVersion: `${group}/v1`,
      resources: Array.from({ length: CRDS }, (_, i) => ({
        name: `r${i}s`,
        singularName: `r${i}`,
        namespaced: true,
        kind: `R${i}`,
        verbs: ['list', 'watch'],
      })),
    },
  };
  return discoverWith((path) => of(documents[path]));
}

describe('resourceLabels', () => {
  it.each([
    { names: ['a', 'b', 'a', 'c'], max: 2, labels: ['a', 'b', 'a', '_other'], others: 1 },
    { names: ['a', 'b', 'c'], max: 5, labels: ['a', 'b', 'c'], others: 0 },
    { names: ['a', 'b', 'c'], max: Infinity, labels: ['a', 'b', 'c'], others: 0 },
    { names: ['c', 'b', 'a'], max: 1, labels: ['c', '_other', '_other'], others: 2 },
    // A resource named `other` keeps its own series, distinct from the overflow's.
    { names: ['other', 'b', 'c'], max: 2, labels: ['other', 'b', '_other'], others: 1 },
  ])('$names, at most $max: $labels', ({ names, max, labels, others }) => {
    const capped = resourceLabels(names, max);
    expect([names.map(capped.label), capped.others]).toEqual([labels, others]);
  });

  it('a cap that is not a positive number is the default, 200', () => {
    const names = Array.from({ length: 300 }, (_, i) => `r${i}`);
    for (const max of [undefined, 0, -1, NaN])
      expect(resourceLabels(names, max)).toMatchObject({ others: 100, max: DEFAULT_MAX_RESOURCE_SERIES });
    expect(DEFAULT_MAX_RESOURCE_SERIES).toBe(200);
  });
});

describe(`serve(): ${CRDS} discovered CustomResourceDefinitions`, () => {
  const subscriptions: Subscription[] = [];
  afterEach(() => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
  });

  /** One informer per discovered resource, each with one object, served; `/metrics` once all synced. */
  async function scrape(maxResourceSeries?: number) {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const discovered = watchableResources(await firstValueFrom(fakeDiscovery()));
    expect(discovered).toHaveLength(CRDS);
    const informers = discovered.map((d) => {
      const object = kubeObj('a', { apiVersion: 'crd.example.com/v1', kind: d.kind, resourceVersion: '5' });
      return informer<KubeObject>({ list: () => of(listPage('5', [object])), watch: () => NEVER }, toResource(d), { scheduler });
    });
    let url = '';
    subscriptions.push(serve(informers, { host: '127.0.0.1', scheduler, maxResourceSeries }).subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    scheduler.flush();
    return (await fetch(`${url}/metrics`)).text();
  }

  it(`at the default, ${DEFAULT_MAX_RESOURCE_SERIES} resources have series of their own; the other ${CRDS - DEFAULT_MAX_RESOURCE_SERIES} are one, "_other", summed`, async () => {
    const text = await scrape();
    expect(text).toContain(
      `# ${CRDS - DEFAULT_MAX_RESOURCE_SERIES} resources past maxResourceSeries (200) are summed, or their worst shown, under name="_other"\n`,
    );
    const families = parseExposition(text);
    const perResource = families.filter((f) => f.samples.some((s) => s.labels['name'] !== undefined));
    expect(perResource.length).toBeGreaterThan(10);
    for (const f of perResource) {
      const names = new Set(f.samples.map((s) => s.labels['name']));
      expect(names.size, f.name).toBeLessThanOrEqual(DEFAULT_MAX_RESOURCE_SERIES + 1);
      expect(names.has(OTHER_RESOURCES), f.name).toBe(true);
    }
    const objects = families.find((f) => f.name === 'informer_store_objects')!.samples;
    expect(objects).toHaveLength(DEFAULT_MAX_RESOURCE_SERIES + 1);
    expect(objects.find((s) => s.labels['name'] === 'r0s.crd.example.com')?.value).toBe(1);
    expect(objects.find((s) => s.labels['name'] === OTHER_RESOURCES)?.value).toBe(CRDS - DEFAULT_MAX_RESOURCE_SERIES);
    expect(families.find((f) => f.name === 'informer_synced')!.samples.find((s) => s.labels['name'] === OTHER_RESOURCES)?.value).toBe(1);
  });

  it('maxResourceSeries: Infinity, a series for each', async () => {
    const text = await scrape(Infinity);
    expect(text).not.toContain('maxResourceSeries');
    const objects = parseExposition(text).find((f) => f.name === 'informer_store_objects')!.samples;
    expect(objects).toHaveLength(CRDS);
    expect(objects.some((s) => s.labels['name'] === OTHER_RESOURCES)).toBe(false);
  });
});

describe('serve(): a resource named other', () => {
  it('keeps its own series below the cap, distinct from the overflow of the resources past it', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const informers = ['other', 'b', 'c'].map((plural) => {
      const resource = customResource({ group: '', version: 'v1', plural, kind: plural.toUpperCase(), namespaced: true });
      const objects = ['x', 'y']
        .slice(0, plural === 'other' ? 2 : 1)
        .map((name) => kubeObj(name, { kind: resource.kind, resourceVersion: '5' }));
      return informer<KubeObject>({ list: () => of(listPage('5', objects)), watch: () => NEVER }, resource, { scheduler });
    });
    let url = '';
    const subscription = serve(informers, { host: '127.0.0.1', scheduler, maxResourceSeries: 2 }).subscribe((s) => (url = s.url));
    try {
      while (url === '') await new Promise((r) => setTimeout(r, 5));
      scheduler.flush();
      const text = await (await fetch(`${url}/metrics`)).text();
      const objects = parseExposition(text).find((f) => f.name === 'informer_store_objects')!.samples;
      expect(objects.map((o) => [o.labels['name'], o.value])).toEqual([
        ['other', 2],
        ['b', 1],
        [OTHER_RESOURCES, 1],
      ]);
      expect(text).not.toMatch(/# .*repeated|# .*left out/);
    } finally {
      subscription.unsubscribe();
    }
  });
});
