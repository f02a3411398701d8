/**
 * A streaming list (`watchList`: a watch with `sendInitialEvents=true`) is a list: until its initial-events-end
 * bookmark it is charged against the budget of a whole list (`http.maxListTotalBytes`), as a paged list's continue
 * chain is. Before, only `maxListObjects` bounded it: a million initial events of up to `maxLineBytes` (16 MiB) each,
 * about 15 TiB, before the informer gave up. A watch is never charged after the bookmark.
 */
import { filter, firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConfigMap, informer, type InformerError } from '../../../src/index.ts';
import { defaultMaxListTotalBytes, formatBytes } from '../../../src/1-transport/http/options.ts';
import { httpListWatch, type WatchFrame, type WatchOptions } from '../../../src/pipeline.ts';
import { MiB } from './memory.ts';
import type { Behaviour } from './server.ts';
import { perTest, target } from './support.ts';

const { subscriptions, serve } = perTest();

const STREAMING: WatchOptions = {
  resourceVersion: '',
  resourceVersionMatch: 'NotOlderThan',
  sendInitialEvents: true,
  allowWatchBookmarks: true,
};

/** A watch event line: an ADDED ConfigMap whose value is `size` bytes (the line about that plus 150). */
const added = (name: string, size: number, rv = '10') =>
  Buffer.from(
    JSON.stringify({
      type: 'ADDED',
      object: { metadata: { name, namespace: 'default', resourceVersion: rv, uid: `uid-${name}` }, data: { k: 'x'.repeat(size) } },
    }) + '\n',
  );

const bookmark = (rv: string) =>
  JSON.stringify({
    type: 'BOOKMARK',
    object: {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } },
    },
  }) + '\n';

/**
 * A watch that sends `lines` ADDED events of `size` bytes each (about 1 KiB … 1 MiB: each far under maxLineBytes),
 * then, when `thenBookmark`, the initial-events-end bookmark and `after` more events, and stays open; else it ends.
 * Events stop once the client is gone.
 */
function stream(lines: number, size: number, options: { thenBookmark?: boolean; after?: number } = {}): Behaviour {
  return async (request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    for (let i = 0; i < lines; i++) if (!(await request.write(added(`cm-${i}`, size)))) return;
    if (!options.thenBookmark) return void response.end();
    if (!(await request.write(bookmark('10')))) return;
    for (let i = 0; i < (options.after ?? 0); i++) if (!(await request.write(added(`late-${i}`, size, String(11 + i))))) return;
  };
}

/**
 * One watch: the frames but ADDED events (those are counted, not kept), `done` (the error it ended with, or undefined
 * when it completed) and `reached(n)`: 'read' once n events came, or how it ended first.
 */
function watched(s: { kc: Parameters<typeof httpListWatch>[0] }, options: WatchOptions, http: Parameters<typeof httpListWatch>[2]) {
  const frames: WatchFrame[] = [];
  let events = 0;
  const waiting: { n: number; resolve: () => void }[] = [];
  const done = new Promise<InformerError | undefined>((resolve) => {
    subscriptions.push(
      httpListWatch(s.kc, target, http)
        .watch(options)
        .subscribe({
          next: (frame) => {
            if (!(frame instanceof Error) && frame.type === 'ADDED') events++;
            else frames.push(frame);
            for (const w of waiting) if (events >= w.n) w.resolve();
          },
          error: (error: InformerError) => resolve(error),
          complete: () => resolve(undefined),
        }),
    );
  });
  const reached = (n: number) =>
    Promise.race([done, new Promise<'read'>((resolve) => waiting.push({ n, resolve: () => resolve('read') }))]);
  return { done, frames, events: () => events, reached };
}

describe('a streaming list is charged against the budget of a whole list until its initial-events-end bookmark', () => {
  it('initial events that each fit but together pass maxListTotalBytes: ListTooLong naming the option, the watch ended', async () => {
    const s = await serve({ watch: stream(4096, 1024) }); // 4 MiB of 1 KiB events, never a bookmark
    const watch = watched(s, STREAMING, { maxListTotalBytes: MiB });
    const error = await watch.done;
    expect(error?.reason).toBe('ListTooLong');
    expect(error?.phase).toBe('watch');
    expect(error?.message).toMatch(
      /^watch \/api\/v1\/namespaces\/default\/configmaps: the streaming list is larger than the 1 MiB limit for a whole list \(\d+ bytes read, about \d+ objects and arrays: charged \d+ bytes before the initial-events-end bookmark\); aborted, relisting after the backoff \(option maxListTotalBytes/,
    );
    // Read up to the budget and a chunk or so past it, not the 4 MiB.
    expect(watch.events()).toBeGreaterThan(800);
    expect(watch.events()).toBeLessThan(1100);
  });

  it('a plain watch (no sendInitialEvents) is not charged: the same 4 MiB of events go through', async () => {
    const s = await serve({ watch: stream(4096, 1024) });
    const watch = watched(s, { resourceVersion: '10' }, { maxListTotalBytes: MiB });
    expect(await watch.reached(4096)).toBe('read');
  });

  it('after the initial-events-end bookmark the watch is not charged: 4 MiB of events past a 1 MiB budget go through', async () => {
    const s = await serve({ watch: stream(100, 1024, { thenBookmark: true, after: 4096 }) });
    const watch = watched(s, STREAMING, { maxListTotalBytes: MiB });
    expect(await watch.reached(4196)).toBe('read');
    expect(watch.frames.filter((f) => !(f instanceof Error) && f.type === 'BOOKMARK')).toHaveLength(1);
  });

  // The default budget is an eighth of the heap limit (about 0.5 GiB here). Lines of empty objects (`[{},{},…]`, charged
  // 32 bytes a `{`, as a paged list's JSON page is: listBudget.ts) reach it in about 50 MiB; the frames are counted, not kept.
  it('default options: the budget is the default maxListTotalBytes, the JSON charge included', async () => {
    const budget = defaultMaxListTotalBytes();
    const line = Buffer.from(
      `{"type":"ADDED","object":{"metadata":{"name":"dense","namespace":"default","resourceVersion":"10"},"data":{"k":[${'{},'.repeat(350_000)}{}]}}}\n`,
    );
    const lines = Math.ceil(budget / (line.length * 10)) + 16;
    const s = await serve({
      watch: async (request, response) => {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        for (let i = 0; i < lines; i++) if (!(await request.write(line))) return;
        response.end();
      },
    });
    const watch = watched(s, STREAMING, {});
    const error = await watch.done;
    expect(error?.reason).toBe('ListTooLong');
    expect(error?.message).toContain(`the streaming list is larger than the ${formatBytes(budget)} limit for a whole list`);
    expect(watch.events()).toBeLessThan(lines);
    expect(error?.message).toMatch(/\(\d+ bytes read, about \d+ objects and arrays: charged \d+ bytes before/);
  }, 120_000);

  it('the informer: ListTooLong on errors$, then the streaming list again after the backoff, which syncs once it fits', async () => {
    let watches = 0;
    const s = await serve({
      watch: (request, response) => {
        watches++;
        // The first streaming list passes the budget; the next sends three objects and the bookmark.
        return watches === 1 ? stream(4096, 1024)(request, response) : stream(3, 1024, { thenBookmark: true })(request, response);
      },
    });
    const cache = informer(s.kc, ConfigMap, {
      namespace: 'default',
      watchList: true,
      backoff: { initialMs: 20, maxMs: 40 },
      http: { maxListTotalBytes: MiB },
    });
    const errors: InformerError[] = [];
    subscriptions.push(cache.errors$.subscribe((e) => errors.push(e)));
    await firstValueFrom(cache.synced$.pipe(filter(Boolean)));
    const store = (await firstValueFrom(cache.store$)).size;
    expect(errors.map((e) => e.reason)).toEqual(['ListTooLong']);
    expect(s.received.watch).toBe(2);
    expect(s.received.list).toBe(0);
    expect(store).toBe(3);
  });
});
