/**
 * A paged list asks for its next page as soon as a page's continue token has arrived (src/1-transport/http/prefetch.ts),
 * against the emulator over HTTP/1.1 and HTTP/2, JSON (eager, lazy, gzip), protobuf and metadata-only: the next page is
 * asked while the page before it is still arriving (held with the emulator's `pauseBody`), taken by the list that asks
 * for it (one request a page), and aborted (the emulator sees the client give its response up) when its page fails, the
 * informer stops, or nobody asks for it. A failure of the request asked ahead is the page's, as without it; an
 * informer syncs the same store with it on and off. No timed assertion: each wait is for a condition.
 */
import { filter, firstValueFrom, lastValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer, type ApiServerOptions, type RequestRecord } from 'rx-informer-emulator';
import { ConfigMap, InformerError, informer } from '../../src/index.ts';
import { metadataOnly } from '../../src/0-model/metadata.ts';
import { httpListWatch, type HttpTransportOptions } from '../../src/1-transport/httpTransport.ts';
import type { ListPage, ListWatch } from '../../src/1-transport/listWatch.ts';
import { until } from '../resilience/realClock.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** Items of about 2 KB: a page's first 300 bytes hold its metadata (the token) and no whole item. */
const DATA = { key: 'x'.repeat(2000) };
const FIRST_BYTES = 300;

async function server(options: ApiServerOptions = {}, count = 7): Promise<ApiServer> {
  const s = await startApiServer({ namespaces: ['ns'], ...options });
  for (let i = 1; i <= count; i++) s.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'ns' }, data: DATA });
  return s;
}

/** The emulator's KubeConfig copied, so that each ListWatch has its own connections. */
function freshKubeConfig(s: ApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(s.kubeConfig.exportConfig());
  return kc;
}

interface Variant {
  readonly name: string;
  readonly server: ApiServerOptions;
  readonly http: HttpTransportOptions;
  readonly metadataOnly?: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: 'JSON, eager', server: {}, http: {} },
  { name: 'JSON, lazy', server: {}, http: { lazyDecode: true } },
  { name: 'protobuf', server: {}, http: { lazyDecode: true, encoding: 'protobuf' } },
  { name: 'JSON, gzip', server: { gzip: { minBytes: 0 } }, http: { compression: 'gzip' } },
  { name: 'metadata-only', server: {}, http: {}, metadataOnly: true },
  { name: 'HTTP/2', server: { http2: true }, http: { protocol: 'h2' } },
  { name: 'HTTP/2, protobuf', server: { http2: true }, http: { protocol: 'h2', lazyDecode: true, encoding: 'protobuf' } },
];

function listWatch(variant: Variant, http: HttpTransportOptions = {}): ListWatch {
  const resource = variant.metadataOnly ? metadataOnly(ConfigMap) : ConfigMap;
  return httpListWatch(freshKubeConfig(api!), { resource, namespace: 'ns' }, { ...variant.http, ...http });
}

const lists = (): RequestRecord[] => api!.requests.filter((r) => r.resource === 'configmaps' && !r.watch);
const continued = (): RequestRecord[] => lists().filter((r) => r.query['continue'] !== undefined);
const first = { predicate: (r: { query: Record<string, string> }) => r.query['continue'] === undefined };
const next = { predicate: (r: { query: Record<string, string> }) => r.query['continue'] !== undefined };
const names = (page: ListPage) => page.items.map((item) => (item as { metadata: { name: string } }).metadata.name);

/** A promise and its resolve. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Lists page by page as the reflector does (the next page asked from inside the page's completion, same limit, the
 * token, no resourceVersion): the pages, or the failure that ended the chain.
 */
function pageByPage(lw: ListWatch, limit: number): { done: Promise<{ pages: ListPage[]; error?: unknown }>; stop: () => void } {
  const pages: ListPage[] = [];
  let current: Subscription | undefined;
  let settle!: (outcome: { pages: ListPage[]; error?: unknown }) => void;
  const done = new Promise<{ pages: ListPage[]; error?: unknown }>((resolve) => (settle = resolve));
  const ask = (token: string | undefined) => {
    let page: ListPage | undefined;
    current?.unsubscribe();
    current = lw.list({ limit, continue: token }).subscribe({
      next: (value) => (page = value),
      error: (error: unknown) => settle({ pages, error }),
      complete: () => {
        pages.push(page!);
        if (page!.continue) ask(page!.continue);
        else settle({ pages });
      },
    });
  };
  ask(undefined);
  return { done, stop: () => current?.unsubscribe() };
}

describe('http.prefetchPages: the next page asked as soon as the token has come', () => {
  for (const variant of VARIANTS) {
    it(`${variant.name}: page 2 is asked while page 1 is still arriving, and taken by the list that asks for it`, async () => {
      api = await server(variant.server);
      const resume = gate();
      api.faults.add({
        match: { resource: 'configmaps', ...first },
        fault: { type: 'pauseBody', afterBytes: FIRST_BYTES, resume: resume.opened },
      });
      const chain = pageByPage(listWatch(variant), 2);
      // Page 1 has sent its first bytes only: the request for page 2 can only be the transport's own.
      await until('page 2 asked ahead', () => continued().length === 1);
      expect(lists()).toHaveLength(2);
      resume.open();
      const { pages, error } = await chain.done;
      expect(error).toBeUndefined();
      expect(pages.map(names)).toEqual([['cm-1', 'cm-2'], ['cm-3', 'cm-4'], ['cm-5', 'cm-6'], ['cm-7']]);
      // One request a page: each asked ahead was taken, none asked twice.
      const tokens = continued().map((r) => r.query['continue']);
      expect(tokens).toHaveLength(3);
      expect(new Set(tokens).size).toBe(3);
      expect(continued().every((r) => r.query['limit'] === '2' && r.query['resourceVersion'] === undefined)).toBe(true);
    });
  }

  it('off (prefetchPages: false): page 2 is asked once page 1 has been read, as client-go does', async () => {
    api = await server();
    const resume = gate();
    api.faults.add({
      match: { resource: 'configmaps', ...first },
      fault: { type: 'pauseBody', afterBytes: FIRST_BYTES, resume: resume.opened },
    });
    const chain = pageByPage(listWatch(VARIANTS[0]!, { prefetchPages: false }), 2);
    await until('page 1 answered', () => lists().length === 1);
    // Page 2 is asked only after page 1 has come whole: resuming page 1 is what lets it be asked.
    const asked = continued().length;
    resume.open();
    const { pages } = await chain.done;
    expect(asked).toBe(0);
    expect(pages).toHaveLength(4);
    expect(continued()).toHaveLength(3);
  });

  for (const variant of [VARIANTS[0]!, VARIANTS[5]!]) {
    it(`${variant.name}: page 1 fails after its token: the request asked ahead is given up`, async () => {
      api = await server(variant.server);
      const resume = gate();
      const cut = { type: 'pauseBody', afterBytes: FIRST_BYTES, resume: resume.opened, reset: true } as const;
      api.faults.add({ match: { resource: 'configmaps', ...first }, fault: cut });
      // Page 2's answer never ends unless the client gives it up: only the abort can end it.
      api.faults.add({ match: { resource: 'configmaps', ...next }, fault: { type: 'pauseBody', afterBytes: 10 } });
      const chain = pageByPage(listWatch(variant), 2);
      await until('page 2 asked ahead', () => continued().length === 1);
      resume.open();
      const { error } = await chain.done;
      expect(error).toBeInstanceOf(InformerError);
      await until('page 2 given up', () => continued()[0]!.ended === 'client');
    });
  }

  it('page 1 passes its byte limit after its token: the request asked ahead is given up', async () => {
    api = await server();
    const resume = gate();
    api.faults.add({
      match: { resource: 'configmaps', ...first },
      fault: { type: 'pauseBody', afterBytes: FIRST_BYTES, resume: resume.opened },
    });
    api.faults.add({ match: { resource: 'configmaps', ...next }, fault: { type: 'pauseBody', afterBytes: 10 } });
    const chain = pageByPage(listWatch(VARIANTS[0]!, { maxListBytes: 3000 }), 2);
    await until('page 2 asked ahead', () => continued().length === 1);
    resume.open();
    const { error } = await chain.done;
    expect(error).toMatchObject({ reason: 'ResponseTooLarge' });
    await until('page 2 given up', () => continued()[0]!.ended === 'client');
  });

  it('page 1 unsubscribed while it arrives (the informer stopped): the request asked ahead is given up too', async () => {
    api = await server();
    api.faults.add({ match: { resource: 'configmaps', ...first }, fault: { type: 'pauseBody', afterBytes: FIRST_BYTES } });
    api.faults.add({ match: { resource: 'configmaps', ...next }, fault: { type: 'pauseBody', afterBytes: 10 } });
    const chain = pageByPage(listWatch(VARIANTS[0]!), 2);
    await until('page 2 asked ahead', () => continued().length === 1);
    chain.stop();
    await until('both given up', () => lists().every((r) => r.ended === 'client'));
  });

  it('nobody asks for page 2 (page 1 was the end of it): the request asked ahead is given up', async () => {
    api = await server();
    const resume = gate();
    api.faults.add({
      match: { resource: 'configmaps', ...first },
      fault: { type: 'pauseBody', afterBytes: FIRST_BYTES, resume: resume.opened },
    });
    api.faults.add({ match: { resource: 'configmaps', ...next }, fault: { type: 'pauseBody', afterBytes: 10 } });
    const page = lastValueFrom(listWatch(VARIANTS[0]!).list({ limit: 2 }));
    await until('page 2 asked ahead', () => continued().length === 1);
    resume.open();
    expect(names(await page)).toEqual(['cm-1', 'cm-2']);
    await until('page 2 given up', () => continued()[0]!.ended === 'client');
  });

  it('a list of another request (a halved limit) gives up the one asked ahead and asks its own', async () => {
    api = await server();
    const resume = gate();
    api.faults.add({
      match: { resource: 'configmaps', ...first },
      fault: { type: 'pauseBody', afterBytes: FIRST_BYTES, resume: resume.opened },
    });
    const limit2 = { predicate: (r: { query: Record<string, string> }) => r.query['continue'] !== undefined && r.query['limit'] === '2' };
    api.faults.add({ match: { resource: 'configmaps', ...limit2 }, fault: { type: 'pauseBody', afterBytes: 10 } });
    const lw = listWatch(VARIANTS[0]!);
    let token: string | undefined;
    const halved = new Promise<ListPage>((resolve, reject) => {
      lw.list({ limit: 2 }).subscribe({
        next: (page) => (token = page.continue),
        complete: () => lw.list({ limit: 1, continue: token }).subscribe({ next: resolve, error: reject }),
      });
    });
    await until('page 2 asked ahead', () => continued().length === 1);
    resume.open();
    expect(names(await halved)).toEqual(['cm-3']);
    expect(continued().map((r) => r.query['limit'])).toEqual(['2', '1']);
    await until('the page asked ahead given up', () => continued()[0]!.ended === 'client');
  });

  for (const [what, fault, reason] of [
    ['410 Expired (the token compacted)', { type: 'status', code: 410, reason: 'Expired' }, 'Expired'],
    ['503 with Retry-After', { type: 'status', code: 503, retryAfterSeconds: 3 }, 'ServerError'],
    ['a reset connection', { type: 'reset' }, 'NetworkError'],
  ] as const) {
    it(`page 2 asked ahead answered ${what}: that is page 2's failure, the same as without, never retried`, async () => {
      api = await server();
      const failure = async (prefetchPages: boolean) => {
        const resume = gate();
        api!.faults.add({
          match: { resource: 'configmaps', ...first },
          fault: { type: 'pauseBody', afterBytes: FIRST_BYTES, resume: resume.opened },
        });
        api!.faults.add({ match: { resource: 'configmaps', ...next }, fault });
        const before = continued().length;
        const chain = pageByPage(listWatch(VARIANTS[0]!, { prefetchPages }), 2);
        // With prefetch, page 1 ends once page 2's failure has been answered: it is held until claimed.
        if (prefetchPages) await until('page 2 answered', () => continued().length > before);
        resume.open();
        const { pages, error } = await chain.done;
        return { pages: pages.length, asked: continued().length - before, error };
      };
      const on = await failure(true);
      const off = await failure(false);
      expect(on.error).toMatchObject({ reason });
      expect({ ...on, error: described(on.error) }).toEqual({ ...off, error: described(off.error) });
      expect(on).toMatchObject({ pages: 1, asked: 1 });
      if (fault.type === 'status' && fault.code === 503) expect(on.error).toMatchObject({ retryAfterSeconds: 3 });
    });
  }

  it("an informer's synced store is the same with prefetch on and off (JSON and protobuf)", async () => {
    api = await server({}, 23);
    const synced = async (http: HttpTransportOptions) => {
      const configMaps = informer(freshKubeConfig(api!), ConfigMap, { namespace: 'ns', pageSize: 5, http });
      const running = configMaps.store$.subscribe();
      try {
        await firstValueFrom(configMaps.synced$.pipe(filter(Boolean)));
        const store = await firstValueFrom(configMaps.store$);
        return store
          .list()
          .map((cm) => ({ key: `${cm.metadata.namespace}/${cm.metadata.name}`, rv: cm.metadata.resourceVersion, data: cm.data }));
      } finally {
        running.unsubscribe();
      }
    };
    const off = await synced({ prefetchPages: false });
    expect(off).toHaveLength(23);
    for (const http of [{}, { lazyDecode: true }, { lazyDecode: true, encoding: 'protobuf' as const }])
      expect(await synced(http)).toEqual(off);
  });
});

/** An error as compared between the two runs: its reason, status, Retry-After and message. */
function described(error: unknown) {
  if (!(error instanceof InformerError)) return error;
  return { reason: error.reason, status: error.status, retryAfterSeconds: error.retryAfterSeconds, message: error.message };
}
