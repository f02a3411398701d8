import { Observable, firstValueFrom, of, type Subscriber } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { DISCOVERY_LIMITS, discover, discoverWith, type Discovery, type DiscoveryOptions } from '../../src/discovery/discovery.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

// Discovery as a whole is bounded (issue: /apis listing ~20,000 groups of 4 MiB documents ran out of memory):
// a few requests at once, a cap on group versions (a typed error naming it), and caps on resources and bytes (the
// group version whose document would pass one is its failure, naming the cap: audit28 saw one oversized group version
// fail discovery for the whole cluster).

/** `/apis` listing `n` groups `g<i>.example.com`, one version each. */
function groups(n: number): unknown {
  return {
    kind: 'APIGroupList',
    groups: Array.from({ length: n }, (_, i) => ({
      name: `g${i}.example.com`,
      versions: [{ groupVersion: `g${i}.example.com/v1`, version: 'v1' }],
      preferredVersion: { groupVersion: `g${i}.example.com/v1`, version: 'v1' },
    })),
  };
}

const resourceList = (count: number, padding = '') => ({
  kind: 'APIResourceList',
  padding,
  resources: Array.from({ length: count }, (_, i) => ({
    name: `r${i}s`,
    singularName: '',
    namespaced: true,
    kind: `R${i}`,
    verbs: ['list', 'watch'],
  })),
});

/**
 * A fake server: `/api` and `/apis` answer at once; each group-version request waits until the test answers it
 * (`answerNext`), so how many are in flight is exact, whatever the machine's speed.
 */
function heldServer(apis: unknown, body: (path: string) => unknown) {
  const held: { path: string; subscriber: Subscriber<unknown> }[] = [];
  const state = { inFlight: 0, maxInFlight: 0, requested: 0 };
  const fetch = (path: string): Observable<unknown> => {
    if (path === '/api') return of({ kind: 'APIVersions', versions: [] });
    if (path === '/apis') return of(apis);
    return new Observable<unknown>((subscriber) => {
      state.requested++;
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      const entry = { path, subscriber };
      held.push(entry);
      return () => {
        state.inFlight--;
        held.splice(held.indexOf(entry), 1);
      };
    });
  };
  const answerNext = (): boolean => {
    const next = held[0];
    if (!next) return false;
    next.subscriber.next(body(next.path));
    next.subscriber.complete();
    return true;
  };
  return { fetch, state, answerNext };
}

function run(observable: Observable<Discovery>) {
  const outcome: { value?: Discovery; error?: unknown } = {};
  observable.subscribe({ next: (value) => (outcome.value = value), error: (error: unknown) => (outcome.error = error) });
  return outcome;
}

describe('discovery is bounded as a whole (default options)', () => {
  it('requests at most maxConcurrentRequests (16) group versions at once, and keeps the server order', () => {
    const server = heldServer(groups(300), (path) => ({
      kind: 'APIResourceList',
      // The group's name as a plural (dots to dashes: a plural is a DNS-1035 label).
      resources: [{ name: path.split('/')[2]?.replaceAll('.', '-'), kind: 'K', verbs: [] }],
    }));
    const outcome = run(discoverWith(server.fetch));
    expect(server.state.inFlight).toBe(16);
    while (server.answerNext()) expect(server.state.inFlight).toBeLessThanOrEqual(16);
    expect(server.state).toEqual({ inFlight: 0, maxInFlight: 16, requested: 300 });
    expect(outcome.value?.all.map((r) => r.plural)).toEqual(Array.from({ length: 300 }, (_, i) => `g${i}-example-com`));
  });

  it('fails past maxGroupVersions (2,000) group versions with ListTooLong naming it, requesting none', () => {
    expect(DISCOVERY_LIMITS.maxGroupVersions).toBe(2000);
    const server = heldServer(groups(2001), () => resourceList(1));
    const outcome = run(discoverWith(server.fetch));
    expect(outcome.error).toBeInstanceOf(InformerError);
    expect((outcome.error as InformerError).reason).toBe('ListTooLong');
    expect((outcome.error as InformerError).message).toContain('maxGroupVersions (2000)');
    expect(server.state.requested).toBe(0);
    // 2,000 are read.
    const fine = heldServer(groups(2000), () => resourceList(1));
    const ok = run(discoverWith(fine.fetch));
    while (fine.answerNext());
    expect(ok.value?.all).toHaveLength(2000);
  });

  it('a group version that would pass maxResources (20,000) is its failure (ListTooLong naming it); the others are read', () => {
    const server = heldServer(groups(30), (path) => (path === '/apis/g3.example.com/v1' ? resourceList(19_990) : resourceList(1000)));
    const outcome = run(discoverWith(server.fetch));
    while (server.answerNext());
    expect(outcome.error).toBeUndefined();
    const found = outcome.value!;
    // g3 comes 4th: 3,000 + 19,990 passes the cap, so g3 is left out; then 17 more of 1,000 fit (20,000), 9 do not.
    expect(found.all).toHaveLength(20_000);
    const failed = found.failures.map((f) => f.groupVersion);
    expect(failed[0]).toBe('g3.example.com/v1');
    expect(failed).toHaveLength(10);
    for (const f of found.failures) {
      expect(f.error.reason).toBe('ListTooLong');
      expect(f.error.message).toContain('maxResources (20000)');
      expect(f.error.message).toContain(f.groupVersion);
    }
    expect(server.state).toMatchObject({ inFlight: 0, requested: 30 });
  });

  it('a group version that would pass maxTotalBytes (64 MiB) of documents is its failure (ResponseTooLarge naming it)', () => {
    const padding = 'x'.repeat(3.5 * 2 ** 20); // one string, shared by every document
    const server = heldServer(groups(30), () => resourceList(1, padding));
    const outcome = run(discoverWith(server.fetch));
    while (server.answerNext());
    expect(outcome.error).toBeUndefined();
    // 18 documents of 3.5 MiB are 63 MiB: the 19th would pass the budget, and so would each after it.
    expect(outcome.value!.all).toHaveLength(18);
    expect(outcome.value!.failures).toHaveLength(12);
    for (const f of outcome.value!.failures) {
      expect(f.error.reason).toBe('ResponseTooLarge');
      expect(f.error.message).toContain('maxTotalBytes (64 MiB)');
    }
    expect(server.state).toMatchObject({ inFlight: 0, requested: 30 });
  });

  // Found by review: the progress rule bounds discovery's documents (transport.md), but its option was not in the type.
  it('takes the transport bounds its documents are read under, the progress floor included (a type check)', () => {
    const options: DiscoveryOptions = { minBodyBytesPerSecond: 1024, listIdleTimeoutMs: 30_000, maxDocumentBytes: 1 << 20 };
    expect(options.minBodyBytesPerSecond).toBe(1024);
  });

  it('takes each cap as an option (Infinity turns it off; 0 or less is the default)', () => {
    const server = heldServer(groups(10), () => resourceList(3));
    const two = run(discoverWith(server.fetch, { maxConcurrentRequests: 2, maxResources: Infinity, maxTotalBytes: 0 }));
    expect(server.state.inFlight).toBe(2);
    while (server.answerNext());
    expect(two.value?.all).toHaveLength(30);
    const capped = run(discoverWith(heldServer(groups(10), () => resourceList(3)).fetch, { maxGroupVersions: 9 }));
    expect((capped.error as InformerError).message).toContain('maxGroupVersions (9)');
  });
});

describe('discovery bounds against the emulator', () => {
  let api: ApiServer | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('reads every group version with the defaults, and leaves out those past a cap given as an option', async () => {
    api = await startApiServer({
      resources: Array.from({ length: 12 }, (_, i) => ({ group: `g${i}.example.com`, version: 'v1', plural: 'things', kind: 'Thing' })),
    });
    const found = await firstValueFrom(discover(api.kubeConfig));
    expect(found.failures).toEqual([]);
    expect(found.resources.filter((r) => r.plural === 'things')).toHaveLength(12);
    const capped = await firstValueFrom(discover(api.kubeConfig, { maxResources: 20 }));
    expect(capped.all.length).toBeLessThanOrEqual(20);
    expect(capped.failures.length).toBeGreaterThan(0);
    for (const f of capped.failures) expect(f.error.message).toContain('maxResources (20)');
  });
});
