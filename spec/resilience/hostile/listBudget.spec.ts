/**
 * The budget of a whole list (`http.maxListTotalBytes`), against a server whose every page carries a fresh
 * continue token and 20 KiB objects, plain and gzip (there about 1 KiB on the wire per 20 KiB inflated): the
 * list is dropped as `ListTooLong` naming its limit once its pages together pass the budget, the informer
 * relists after the backoff and goes on, and the heap after GC stays within the budget while the server keeps
 * answering. Before the budget, such a chain ran until `maxListPages` (10,000 pages: 10 GB here) and a
 * V8 out-of-memory crash came first.
 */
import { getHeapStatistics } from 'node:v8';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ConfigMap, informer, type InformerError } from '../../../src/index.ts';
import { defaultMaxListTotalBytes, formatBytes } from '../../../src/1-transport/http/options.ts';
import { httpListWatch } from '../../../src/pipeline.ts';
import { MiB, retainedBytes } from './memory.ts';
import type { Behaviour } from './server.ts';
import { failure, perTest, target } from './support.ts';

const { subscriptions, serve } = perTest();

/** Pages of 50 ConfigMaps of 20 KiB (about 1 MiB), each with a continue token never sent before. */
function freshTokens(gzip: boolean): Behaviour {
  let page = 0;
  const value = 'x'.repeat(20 * 1024);
  return async (request, response) => {
    page++;
    const items = Array.from({ length: 50 }, (_, i) => ({
      metadata: { name: `cm-${page}-${i}`, namespace: 'default', resourceVersion: '10', uid: `uid-${page}-${i}` },
      data: { k: value },
    }));
    const body = JSON.stringify({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '10', continue: `t${page}` },
      items,
    });
    response.writeHead(200, { 'Content-Type': 'application/json', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) });
    await request.write(gzip ? gzipSync(body) : body);
    response.end();
  };
}

/** Pages of 200 ConfigMaps of 20 KiB (about 4 MiB), each with a fresh continue token; the items encoded once. */
function bigPages(): Behaviour {
  let page = 0;
  const value = 'x'.repeat(20 * 1024);
  const items = Array.from({ length: 200 }, (_, i) => ({
    metadata: { name: `cm-${i}`, namespace: 'default', resourceVersion: '10', uid: `uid-${i}` },
    data: { k: value },
  }));
  const head = `{"kind":"ConfigMapList","apiVersion":"v1","items":${JSON.stringify(items)},"metadata":{"resourceVersion":"10",`;
  return async (request, response) => {
    page++;
    response.writeHead(200, { 'Content-Type': 'application/json' });
    if (!(await request.write(head))) return;
    await request.write(`"continue":"t${page}"}}`);
    response.end();
  };
}

/** A page whose one item holds about `bytes` of empty objects (`[{},{},…]`), continued by `token` when given. */
function emptyObjects(bytes: number, token?: string): Behaviour {
  const empties = '[' + '{},'.repeat(Math.floor(bytes / 3)) + '{}]';
  const continued = token ? `,"continue":"${token}"` : '';
  return async (request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    await request.write(
      `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"${continued}},"items":[{"metadata":{"name":"a","namespace":"default"},"data":{"k":${empties}}}]}`,
    );
    response.end();
  };
}

/** A varint's bytes (protobuf). */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n > 127; n = Math.floor(n / 128)) out.push((n & 127) | 128);
  out.push(n);
  return out;
}
const field = (tag: number, payload: Buffer) => Buffer.concat([Buffer.from([tag, ...varint(payload.length)]), payload]);

/**
 * A protobuf ConfigMapList page of `count` empty ConfigMaps (`12 00`: 2 bytes on the wire, over 100 of heap decoded),
 * continued by `token` when given.
 */
function emptyProtobufItems(count: number, token?: string): Behaviour {
  const listMeta = field(0x0a, Buffer.concat([field(0x12, Buffer.from('10')), token ? field(0x1a, Buffer.from(token)) : Buffer.alloc(0)]));
  const items = Buffer.alloc(2 * count);
  for (let i = 0; i < items.length; i += 2) items[i] = 0x12;
  const typeMeta = field(0x0a, Buffer.concat([field(0x0a, Buffer.from('v1')), field(0x12, Buffer.from('ConfigMapList'))]));
  const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), typeMeta, field(0x12, Buffer.concat([listMeta, items]))]);
  return async (request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/vnd.kubernetes.protobuf' });
    await request.write(body);
    response.end();
  };
}
const protobuf = { encoding: 'protobuf', lazyDecode: true } as const;

const BUDGET = 16 * MiB;
/** Beyond the budget: the page in flight and its decoding, socket buffers, the informer's own state. */
const SLACK = 8 * MiB;

describe('hostile continue chains of 20 KiB objects: the budget of a whole list', () => {
  for (const compression of ['none', 'gzip'] as const) {
    it(`${compression}: ListTooLong naming maxListTotalBytes, a relist after it, heap after GC within the budget while the server keeps answering`, async () => {
      const chain = freshTokens(compression === 'gzip');
      const s = await serve({ list: chain, continue: chain });
      const before = retainedBytes();
      const cache = informer(s.kc, ConfigMap, {
        namespace: 'default',
        backoff: { initialMs: 20, maxMs: 40 },
        http: { compression, maxListTotalBytes: BUDGET },
      });
      const errors: InformerError[] = [];
      subscriptions.push(
        cache.errors$.subscribe((e) => errors.push(e)),
        cache.synced$.subscribe(),
      );
      let peak = 0;
      const tooLong = () => errors.filter((e) => e.reason === 'ListTooLong').length;
      // Sampled while the chains run (a full GC each time, so not too often): until three lists are dropped, or the
      // heap is far past the budget (the chain unbounded), or 600 samples.
      for (let i = 0; i < 600 && tooLong() < 3 && peak <= 3 * BUDGET; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        peak = Math.max(peak, retainedBytes() - before);
      }
      expect(peak / MiB, 'retained MiB at the peak').toBeLessThan((BUDGET + SLACK) / MiB);
      expect(errors.filter((e) => e.reason !== 'ListTooLong')).toEqual([]);
      const [first] = errors;
      expect(first?.phase).toBe('list');
      expect(first?.message).toMatch(
        /^list \/api\/v1\/namespaces\/default\/configmaps: the list is larger than the 16 MiB limit for a whole list \(\d+ pages \(\d+ bytes\), then \d+ bytes read of the next page\); aborted, relisting after the backoff \(option maxListTotalBytes/,
      );
      // Each dropped list starts anew (a first page, no continue token): the informer goes on.
      expect(s.received.list).toBeGreaterThanOrEqual(3);
    }, 60_000);
  }

  // At the default budget (an eighth of the heap limit, about 0.5 GiB here; plain only: each run reads two budgets,
  // and the encoding is no part of it: the gzip case above, and by hand the CLI, plain and gzip). V8 lets its heap grow
  // to up to four times what was live at its last full collection, so a list dropped on its budget stayed in the heap
  // as garbage while the next list grew (the CLI: 2.5 GB RSS in 60 s). It must be freed before the relist starts: the
  // heap in use (no collection of the test's own) when the relist's first request arrives is far below the budget.
  // Larger pages than above (200 objects, about 4 MiB): the same objects, fewer requests.
  it('default options: the dropped list is freed before the relist starts', async () => {
    const budget = defaultMaxListTotalBytes();
    const chain = bigPages();
    const inUse: number[] = [];
    let relisted: () => void = () => undefined;
    const twice = new Promise<void>((resolve) => (relisted = resolve));
    const s = await serve({
      continue: chain,
      list: (request, response) => {
        inUse.push(process.memoryUsage().heapUsed);
        if (inUse.length === 2) relisted();
        return chain(request, response);
      },
    });
    const before = retainedBytes();
    const cache = informer(s.kc, ConfigMap, { namespace: 'default' });
    const errors: InformerError[] = [];
    subscriptions.push(
      cache.errors$.subscribe((e) => errors.push(e)),
      cache.synced$.subscribe(),
    );
    await twice;
    expect(errors.map((e) => e.reason)).toEqual(['ListTooLong']);
    expect(errors[0]?.message).toContain(`larger than the ${formatBytes(budget)} limit for a whole list`);
    const atRelist = inUse[1]! - before;
    expect(atRelist / MiB, 'MiB of heap in use when the relist starts').toBeLessThan(budget / 4 / MiB);
  }, 120_000);

  it('the transport alone: the budget counts the pages of one chain, by the token that continues it', async () => {
    const chain = freshTokens(false);
    const s = await serve({ list: chain, continue: chain });
    const lw = httpListWatch(s.kc, target, { maxListTotalBytes: 2 * MiB });
    let token: string | undefined;
    for (let i = 0; i < 2; i++) {
      const page = await new Promise<{ continue?: string }>((resolve, reject) => {
        subscriptions.push(lw.list(token ? { continue: token } : {}).subscribe({ next: resolve, error: reject }));
      });
      token = page.continue;
    }
    // A third page would pass 2 MiB: aborted.
    const error = await failure(lw.list({ continue: token! }));
    expect(error.reason).toBe('ListTooLong');
    expect(error.message).toMatch(/larger than the 2 MiB limit for a whole list \(2 pages \(\d+ bytes\), then \d+ bytes read/);
    // A new list (no token), or a token this transport never handed out, starts a budget of its own.
    await expect(new Promise((resolve, reject) => lw.list({}).subscribe({ next: resolve, error: reject }))).resolves.toBeDefined();
    await expect(
      new Promise((resolve, reject) => lw.list({ continue: 'elsewhere' }).subscribe({ next: resolve, error: reject })),
    ).resolves.toBeDefined();
  });

  // A page's bytes understate its heap when it is made of tiny values: `{},` is 3 bytes and 64 of heap once parsed
  // (a 50 MiB body of them took 460 MB). A JSON page is charged its objects and arrays (listBudget.ts, PageCost) when
  // that is more than its bytes. The limits here are the defaults scaled by one factor (a page 1/256 of 256 MiB, a list
  // 2 MiB), and so are the bodies: under each limit in bytes, over it in objects.
  it('a page of empty objects passes maxListBytes by its objects, not its bytes: ResponseTooLarge', async () => {
    const s = await serve({ list: emptyObjects(120 * 1024) });
    const error = await failure(httpListWatch(s.kc, target, { maxListBytes: MiB }).list({}));
    expect(error.reason).toBe('ResponseTooLarge');
    expect(error.message).toMatch(
      /larger than the 1 MiB limit \(\d+ bytes read, about \d+ objects and arrays: charged \d+ bytes\); aborted \(option maxListBytes\)/,
    );
  });

  it('a chain of pages of empty objects passes maxListTotalBytes by its objects: ListTooLong', async () => {
    const s = await serve({ list: emptyObjects(100 * 1024, 't1'), continue: emptyObjects(100 * 1024) });
    const lw = httpListWatch(s.kc, target, { maxListTotalBytes: 2 * MiB });
    const first = await new Promise<{ continue?: string }>((resolve, reject) => {
      subscriptions.push(lw.list({}).subscribe({ next: resolve, error: reject }));
    });
    const error = await failure(lw.list({ continue: first.continue! }));
    expect(error.reason).toBe('ListTooLong');
    expect(error.message).toMatch(/larger than the 2 MiB limit for a whole list \(1 pages \(\d{7} bytes\), then/);
  });

  // The protobuf twins: an item is charged 64 bytes when that is more than the page's bytes (listBudget.ts,
  // CHARGE_PER_ITEM), so a 1 MiB page limit holds 16,384 items however few bytes they take; before, such a page was
  // charged its bytes only (audit29: a 24 MiB page of 12.5 M empty items ran a 1 GiB heap out of memory).
  it('a protobuf page of empty items passes maxListBytes by its items, not its bytes: ResponseTooLarge', async () => {
    const s = await serve({ list: emptyProtobufItems(60_000) }); // 117 KiB
    const error = await failure(httpListWatch(s.kc, target, { ...protobuf, maxListBytes: MiB }).list({}));
    expect(error.reason).toBe('ResponseTooLarge');
    expect(error.message).toMatch(
      /larger than the 1 MiB limit \(\d+ bytes read, more than 16384 items: charged 64 bytes an item\); aborted \(option maxListBytes\)/,
    );
  });

  it('a protobuf page of as many items as its limit holds at 64 bytes each is read', async () => {
    const s = await serve({ list: emptyProtobufItems(16_384) });
    const page = await new Promise<{ items: readonly unknown[] }>((resolve, reject) => {
      subscriptions.push(
        httpListWatch(s.kc, target, { ...protobuf, maxListBytes: MiB })
          .list({})
          .subscribe({ next: resolve, error: reject }),
      );
    });
    expect(page.items).toHaveLength(16_384);
  });

  it('a chain of protobuf pages of empty items passes maxListTotalBytes by its items: ListTooLong', async () => {
    // 20,000 items a page: 39 KiB on the wire, charged 1.25 MB; the second page passes the 2 MiB budget.
    const s = await serve({ list: emptyProtobufItems(20_000, 't1'), continue: emptyProtobufItems(20_000) });
    const lw = httpListWatch(s.kc, target, { ...protobuf, maxListTotalBytes: 2 * MiB });
    const first = await new Promise<{ continue?: string }>((resolve, reject) => {
      subscriptions.push(lw.list({}).subscribe({ next: resolve, error: reject }));
    });
    const error = await failure(lw.list({ continue: first.continue! }));
    expect(error.reason).toBe('ListTooLong');
    expect(error.message).toMatch(
      /larger than the 2 MiB limit for a whole list \(1 pages \(1280000 bytes\), then \d+ bytes read, more than/,
    );
  });

  // PageCost draws which words it reads (listBudget.ts): from the transport's `random`, the informer's unless
  // `http.random` is given, so a seeded run charges a page the same way each time (it was always Math.random).
  it("the page's charge draws from the transport's random, and from the informer's", async () => {
    const s = await serve({ list: emptyObjects(64 * 1024) });
    let drawn = 0;
    const random = () => (drawn++, 0.5);
    await new Promise((resolve, reject) => {
      subscriptions.push(httpListWatch(s.kc, target, { random }).list({}).subscribe({ next: resolve, error: reject }));
    });
    expect(drawn, 'draws while the page was read').toBeGreaterThan(0);

    drawn = 0;
    const watched = new Promise<number>((resolve) => {
      s.on('watch', (_request, response) => {
        resolve(drawn);
        response.writeHead(200, { 'Content-Type': 'application/json' });
      });
    });
    const cache = informer(s.kc, ConfigMap, { namespace: 'default', random });
    subscriptions.push(cache.synced$.subscribe());
    const drawnAtWatch = await watched;
    // One draw is the watch's timeout; the others read the page.
    expect(drawnAtWatch).toBeGreaterThan(1);
  });

  it('the default budget is an eighth of V8 heap limit', () => {
    expect(defaultMaxListTotalBytes()).toBe(Math.floor(getHeapStatistics().heap_size_limit / 8));
  });
});
