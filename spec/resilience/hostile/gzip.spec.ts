/**
 * The hostile-server suite, compressed: with `compression: 'gzip'` every byte limit counts inflated bytes.
 * A gzip bomb (member after member of 64 MiB of spaces, about 64 KiB each on the wire) is `ResponseTooLarge`
 * at the limit of a list page, an error body or a discovery document, with the inflater stopped there (no
 * more than a chunk past the limit is ever inflated) and the request aborted; a bomb in a watch line is
 * dropped as it inflates, memory bounded while it keeps coming. A gzip body that does not inflate (corrupt,
 * cut short) and an encoding nobody asked for are `MalformedLine`, and the informer recovers once the
 * server behaves.
 */
import { createGzip } from 'node:zlib';
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConfigMap, informer, type InformerError } from '../../../src/index.ts';
import { discover } from '../../../src/discovery/index.ts';
import { httpListWatch } from '../../../src/pipeline.ts';
import { transportBytes } from '../../../src/metrics/index.ts';
import { waitFor } from '../harness/live.ts';
import { MiB, retainedBytes } from './memory.ts';
import { behave, configMap, encodedAs, gzipBomb, gzipped, type Behaviour, type RequestKind } from './server.ts';
import { BUDGET, IN_FLIGHT, LIST_BODY_HEAD, discoveryWith, failure, perTest, target, watchOf } from './support.ts';

const { subscriptions, serve, start } = perTest();

/** Bytes inflated since `before` (a `transportBytes().gzipDecodedBytes`). */
const inflatedSince = (before: number) => transportBytes().gzipDecodedBytes - before;

/** `behaviour`, noting when the client went away from its response. */
function watched(behaviour: Behaviour): { behaviour: Behaviour; closed: () => boolean } {
  let closed = false;
  return {
    behaviour: (request, response) => {
      response.on('close', () => (closed = true));
      return behaviour(request, response);
    },
    closed: () => closed,
  };
}

describe('hostile server, gzip: bombs stop at the limit, counted in inflated bytes', () => {
  const cases: { name: string; kind: RequestKind; behaviour: Behaviour; limit: number; option: string; status?: number }[] = [
    { name: 'a list page', kind: 'list', behaviour: gzipBomb(200, LIST_BODY_HEAD), limit: 4 * MiB, option: 'maxListBytes' },
    { name: 'a continue page', kind: 'continue', behaviour: gzipBomb(200, LIST_BODY_HEAD), limit: 4 * MiB, option: 'maxListBytes' },
    { name: 'an error body (500)', kind: 'list', behaviour: gzipBomb(500), limit: MiB, option: 'maxErrorBodyBytes', status: 500 },
  ];
  for (const c of cases) {
    it(`${c.kind}: a gzip bomb as ${c.name} → ResponseTooLarge at ${c.limit / MiB} MiB inflated, the request aborted`, async () => {
      const bomb = watched(c.behaviour);
      const s = await start(c.kind, bomb.behaviour);
      const before = retainedBytes();
      const inflated = transportBytes().gzipDecodedBytes;
      const http = { compression: 'gzip', ...(c.option === 'maxListBytes' ? { maxListBytes: c.limit } : {}) } as const;
      const error = await failure(httpListWatch(s.kc, target, http).list(c.kind === 'continue' ? { continue: 'next-page' } : {}));
      expect(error.reason).toBe('ResponseTooLarge');
      expect(error.message).toMatch(
        new RegExp(`larger than the ${c.limit / MiB} MiB limit \\(\\d+ bytes read\\); aborted \\(option ${c.option}\\)$`),
      );
      if (c.status !== undefined) expect(error.status).toBe(c.status);
      // The inflater stopped at the limit (a 64 KiB chunk past it at most), whatever was still on its way.
      expect(inflatedSince(inflated)).toBeGreaterThan(c.limit);
      expect(inflatedSince(inflated)).toBeLessThanOrEqual(c.limit + 64 * 1024);
      // The request was aborted (the server sees its response closed), having written no more than fits in flight.
      await waitFor('the server to see the request aborted', bomb.closed);
      expect(s.written[c.kind]).toBeLessThan(IN_FLIGHT);
      expect(retainedBytes() - before).toBeLessThan(BUDGET);
    });
  }

  it('discovery: a gzip bomb as /api → ResponseTooLarge at the 4 MiB maxDocumentBytes, inflated', async () => {
    const s = await start('discovery', discoveryWith('/api', gzipBomb(200)));
    const inflated = transportBytes().gzipDecodedBytes;
    const error = await failure(discover(s.kc, { compression: 'gzip' }));
    expect(error.reason).toBe('ResponseTooLarge');
    expect(error.message).toMatch(/^GET \/api: the response is larger than the 4 MiB limit .*option maxDocumentBytes/);
    expect(inflatedSince(inflated)).toBeLessThanOrEqual(4 * MiB + 64 * 1024);
    expect(s.written.discovery).toBeLessThan(IN_FLIGHT);
  });

  it('watch: a gzip bomb in a line is reported once, dropped as it inflates, memory bounded while it keeps coming', async () => {
    const s = await start('watch', gzipBomb(200, '{"type":"ADDED","object":{"metadata":{"name":"'));
    const before = retainedBytes();
    const inflated = transportBytes().gzipDecodedBytes;
    const wire = transportBytes().gzipWireBytes;
    const watch = watchOf(s, subscriptions, { compression: 'gzip', maxLineBytes: MiB });
    await waitFor('the oversize report', () => watch.errors().length > 0);
    const samples: number[] = [];
    for (const mark of [128, 256, 384, 512]) {
      await waitFor(`${mark} MiB inflated`, () => inflatedSince(inflated) > mark * MiB, 20_000);
      samples.push(retainedBytes() - before);
    }
    expect(watch.end).toEqual({});
    expect(watch.errors()).toHaveLength(1);
    expect(watch.errors()[0]!.message).toMatch(/a line passed the 1 MiB limit \(\d+ bytes; option maxLineBytes\); watch ended$/);
    expect(Math.max(...samples)).toBeLessThan(BUDGET);
    // Half a GiB inflated from well under 5 MiB read off the wire (the server may have more in flight).
    expect(transportBytes().gzipWireBytes - wire).toBeLessThan((512 * MiB) / 100);
  });
});

describe('hostile server, gzip: bodies that do not inflate, and encodings not asked for', () => {
  const list = JSON.stringify({
    kind: 'ConfigMapList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '10' },
    items: [configMap('a', '10')],
  });
  const cases: { name: string; behaviour: Behaviour; message: RegExp }[] = [
    { name: 'corrupt gzip', behaviour: gzipped(200, list, 'corrupt'), message: /: the gzip body is corrupt \(Z_DATA_ERROR\); aborted$/ },
    { name: 'gzip cut short in a clean response', behaviour: gzipped(200, list, 'cut'), message: /: the gzip body ended early; aborted$/ },
    {
      name: 'Content-Encoding br',
      behaviour: encodedAs(200, 'br'),
      message: /^list \/api\/v1\/namespaces\/default\/configmaps: the response came in Content-Encoding "br", not asked for; aborted$/,
    },
  ];
  for (const c of cases) {
    it(`list: ${c.name} → MalformedLine`, async () => {
      const s = await start('list', c.behaviour);
      const error = await failure(httpListWatch(s.kc, target, { compression: 'gzip' }).list({}));
      expect(error.reason).toBe('MalformedLine');
      expect(error.phase).toBe('list');
      expect(error.message).toMatch(c.message);
    });
  }

  it('a gzip body the client did not ask for is still read (a proxy may add it)', async () => {
    const s = await start('list', gzipped(200, list));
    const page = await lastValueFrom(httpListWatch(s.kc, target, { compression: 'none' }).list({}));
    expect(page.items).toHaveLength(1);
  });

  it('watch: a gzip stream that turns corrupt mid-stream ends the watch with MalformedLine after the events before it', async () => {
    const event = `${JSON.stringify({ type: 'ADDED', object: configMap('a', '11') })}\n`;
    const s = await start('watch', async (request, response) => {
      await gzipped(200, event, 'whole', true)(request, response);
      await request.write(Buffer.alloc(64, 0xff));
    });
    const watch = watchOf(s, subscriptions, { compression: 'gzip' });
    await waitFor('the watch to fail', () => watch.end.error !== undefined);
    expect(watch.frames.map((f) => ('type' in f ? f.type : f.reason))).toEqual(['ADDED']);
    expect(watch.end.error!.reason).toBe('MalformedLine');
    expect(watch.end.error!.phase).toBe('watch');
    expect(watch.end.error!.message).toMatch(/^watch \/api\/v1\/namespaces\/default\/configmaps: the gzip body is corrupt/);
  });

  const recoveries: { name: string; kind: RequestKind; behaviour: Behaviour }[] = [
    { name: 'a corrupt gzip list', kind: 'list', behaviour: gzipped(200, list, 'corrupt') },
    { name: 'a gzip bomb list', kind: 'list', behaviour: gzipBomb(200, LIST_BODY_HEAD) },
    { name: 'a watch in Content-Encoding br', kind: 'watch', behaviour: encodedAs(200, 'br') },
  ];
  for (const c of recoveries) {
    it(`${c.name}: a typed error on errors$, then the informer converges once the server behaves`, async () => {
      const server = await serve({
        list: behave.list([configMap('a', '10')]),
        watch: behave.watch([{ type: 'ADDED', object: configMap('b', '11') }]),
        [c.kind]: c.behaviour,
      });
      const cache = informer(server.kc, ConfigMap, {
        backoff: { initialMs: 10, maxMs: 50 },
        namespace: 'default',
        http: { compression: 'gzip', maxListBytes: MiB },
      });
      const errors: InformerError[] = [];
      let keys: string[] = [];
      subscriptions.push(
        cache.errors$.subscribe((e) => errors.push(e)),
        cache.store$.subscribe((st) => (keys = st.keys().sort())),
      );
      const reason = c.name.includes('bomb') ? 'ResponseTooLarge' : 'MalformedLine';
      await waitFor(`${reason} on errors$`, () => errors.some((e) => e.reason === reason));
      server.on(
        'list',
        gzipped(200, JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '10' }, items: [configMap('a', '10')] })),
      );
      server.on('watch', gzipped(200, `${JSON.stringify({ type: 'ADDED', object: configMap('b', '11') })}\n`, 'whole', true));
      await waitFor('the store to converge', () => keys.join() === 'default/a,default/b');
    });
  }
});

describe('hostile server, gzip: an empty body marked gzip', () => {
  it('is an empty body: a 503 stays a ServerError, not a gzip body cut short', async () => {
    const s = await start('list', (_request, response) => {
      response.writeHead(503, { 'Content-Encoding': 'gzip', 'Retry-After': '1' });
      response.end();
    });
    const error = await failure(httpListWatch(s.kc, target, { compression: 'gzip' }).list({}));
    expect(error.reason).toBe('ServerError');
    expect(error.status).toBe(503);
  });
});

describe('gzip watch streams, one gzip stream flushed per event (as Go’s gzip.Writer.Flush)', () => {
  it('each event is read as soon as it is flushed, before the next one is sent', async () => {
    let next: (() => void) | undefined;
    const s = await start('watch', (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
      const zip = createGzip({ level: 1 });
      zip.pipe(response);
      let n = 0;
      const send = () => {
        n++;
        zip.write(`${JSON.stringify({ type: 'ADDED', object: configMap(`cm-${n}`, String(10 + n)) })}\n`);
        zip.flush();
      };
      send();
      next = send;
    });
    const watch = watchOf(s, subscriptions, { compression: 'gzip' });
    for (let n = 1; n <= 3; n++) {
      await waitFor(`event ${n}`, () => watch.frames.length === n);
      if (n < 3) next!();
    }
    expect(
      watch.frames.map((f) => ('type' in f ? `${f.type} ${(f.object as { metadata: { name: string } }).metadata.name}` : f.reason)),
    ).toEqual(['ADDED cm-1', 'ADDED cm-2', 'ADDED cm-3']);
    expect(watch.end).toEqual({});
  });
});
