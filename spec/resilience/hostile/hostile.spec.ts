/**
 * The hostile-server suite: a server of our own answers each request kind
 * (list, continue page, watch, discovery, error Status) with pathological
 * responses — endless, huge, slow-drip, garbage, wrong content type, truncated —
 * and for each the client reports a clear typed error, reads no more than its
 * limit (the server can tell how much it got to write), does not crash, keeps
 * its memory bounded while the response keeps coming, and recovers once the
 * server behaves. Limits are lowered where that keeps the suite fast; the
 * defaults are in docs/reliability.md ("Limits").
 */
import { lastValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, discover, informer, type ErrorReason, type HttpTransportOptions, type InformerError } from '../../../src/index.ts';
import { httpListWatch, type WatchFrame } from '../../../src/pipeline.ts';
import { waitFor } from '../harness/live.ts';
import { MiB, retainedBytes } from './memory.ts';
import {
  behave,
  configMap,
  drip,
  endless,
  garbage,
  hostileServer,
  huge,
  status,
  truncated,
  wrongContentType,
  type Behaviour,
  type HostileServer,
  type RequestKind,
} from './server.ts';

let server: HostileServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await server?.close();
  server = undefined;
});

const target = { resource: ConfigMap, namespace: 'default' } as const;
/** What may sit in socket buffers (both ends) and in flight when the client stops reading. */
const IN_FLIGHT = 24 * MiB;
/** Retained memory growth allowed while a pathological response is read: far below what it sends. */
const BUDGET = 16 * MiB;

async function start(kind: RequestKind, behaviour: Behaviour): Promise<HostileServer> {
  server = await hostileServer({ [kind]: behaviour });
  return server;
}

/** The error a cold Observable ends with (fails the test if it completes). */
async function failure(observable: import('rxjs').Observable<unknown>): Promise<InformerError> {
  try {
    await lastValueFrom(observable);
  } catch (error) {
    return error as InformerError;
  }
  throw new Error('expected an error, got a completion');
}

/** A watch's frames and how it ended. */
function watchOf(s: HostileServer, http: HttpTransportOptions = {}) {
  const frames: WatchFrame[] = [];
  const end: { error?: InformerError; complete?: boolean } = {};
  subscriptions.push(
    httpListWatch(s.kc, target, http)
      .watch({ resourceVersion: '10' })
      .subscribe({ next: (f) => frames.push(f), error: (e: InformerError) => (end.error = e), complete: () => (end.complete = true) }),
  );
  const errors = () => frames.filter((f): f is InformerError => f instanceof Error);
  return { frames, end, errors };
}

interface Case {
  readonly name: string;
  readonly kind: RequestKind;
  readonly behaviour: Behaviour;
  readonly http?: HttpTransportOptions;
  readonly reason: ErrorReason;
  readonly message: RegExp;
  readonly status?: number;
}

const LIST_BODY_HEAD = '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[';
const listCases: Case[] = [
  { name: 'endless body', kind: 'list', behaviour: endless(200, { head: LIST_BODY_HEAD }), http: { maxListBytes: 4 * MiB }, reason: 'ResponseTooLarge', message: /^list \/api\/v1\/namespaces\/default\/configmaps: the response is larger than the 4 MiB limit \(\d+ bytes read\); aborted \(option maxListBytes\)$/ },
  { name: 'endless body on a continue page', kind: 'continue', behaviour: endless(200, { head: LIST_BODY_HEAD }), http: { maxListBytes: 4 * MiB }, reason: 'ResponseTooLarge', message: /larger than the 4 MiB limit/ },
  { name: 'huge Content-Length', kind: 'list', behaviour: huge(200, 1024 * MiB), reason: 'ResponseTooLarge', message: /larger than the 256 MiB limit \(Content-Length 1073741824\)/ },
  { name: 'slow drip', kind: 'list', behaviour: drip(200, { head: LIST_BODY_HEAD }), http: { maxListBytes: 128 * 1024 }, reason: 'ResponseTooLarge', message: /larger than the 128 KiB limit/ },
  { name: 'garbage', kind: 'list', behaviour: garbage(200), reason: 'MalformedLine', message: /the response is not JSON \(4096 bytes/ },
  { name: 'wrong content type', kind: 'list', behaviour: wrongContentType(200), reason: 'MalformedLine', message: /the response is not JSON/ },
  { name: 'truncated', kind: 'list', behaviour: truncated(200, `${LIST_BODY_HEAD}]}`), reason: 'NetworkError', message: /closed before the response was complete/ },
  { name: 'endless error body (500)', kind: 'list', behaviour: endless(500), reason: 'ResponseTooLarge', status: 500, message: /\(HTTP 500 error body\): the response is larger than the 1 MiB limit .*option maxErrorBodyBytes/ },
  { name: 'huge error body (503)', kind: 'list', behaviour: huge(503, 64 * MiB), reason: 'ResponseTooLarge', status: 503, message: /1 MiB limit \(Content-Length 67108864\)/ },
  { name: 'wrong content type error (502)', kind: 'list', behaviour: wrongContentType(502), reason: 'ServerError', status: 502, message: /^HTTP 502$/ },
];

describe('hostile server: list and continue pages', () => {
  for (const c of listCases) {
    it(`${c.kind}: ${c.name} → ${c.reason}, no more read than the limit, memory bounded`, async () => {
      const s = await start(c.kind, c.behaviour);
      const measured = c.reason === 'ResponseTooLarge';
      const before = measured ? retainedBytes() : 0;
      const lw = httpListWatch(s.kc, target, c.http);
      const error = await failure(lw.list(c.kind === 'continue' ? { continue: 'next-page' } : {}));
      expect(error.reason).toBe(c.reason);
      expect(error.message).toMatch(c.message);
      expect(error.phase).toBe('list');
      if (c.status !== undefined) expect(error.status).toBe(c.status);
      expect(s.written[c.kind]).toBeLessThan((c.http?.maxListBytes ?? MiB) + IN_FLIGHT);
      if (measured) expect(retainedBytes() - before).toBeLessThan(BUDGET);
    });
  }
});

const watchCases: Case[] = [
  { name: 'endless error body (500)', kind: 'watch', behaviour: endless(500), reason: 'ResponseTooLarge', status: 500, message: /^watch \/api\/v1\/namespaces\/default\/configmaps \(HTTP 500 error body\): the response is larger than the 1 MiB limit/ },
  { name: 'huge error body (503)', kind: 'watch', behaviour: huge(503, 64 * MiB), reason: 'ResponseTooLarge', status: 503, message: /Content-Length 67108864/ },
  { name: 'slow-drip error body (500)', kind: 'watch', behaviour: drip(500), http: { maxErrorBodyBytes: 64 * 1024 }, reason: 'ResponseTooLarge', status: 500, message: /64 KiB limit/ },
  { name: 'truncated', kind: 'watch', behaviour: truncated(200, '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED"'), reason: 'NetworkError', message: /closed mid-stream/ },
];

describe('hostile server: watch', () => {
  for (const c of watchCases) {
    it(`watch: ${c.name} → ${c.reason}`, async () => {
      const s = await start(c.kind, c.behaviour);
      const before = retainedBytes();
      const watch = watchOf(s, c.http);
      await waitFor('the watch to fail', () => watch.end.error !== undefined);
      expect(watch.end.error!.reason).toBe(c.reason);
      expect(watch.end.error!.message).toMatch(c.message);
      if (c.status !== undefined) expect(watch.end.error!.status).toBe(c.status);
      expect(s.written.watch).toBeLessThan(MiB + IN_FLIGHT);
      expect(retainedBytes() - before).toBeLessThan(BUDGET);
    });
  }

  it('a line that never ends is reported once, as it passes the limit, and memory stays bounded while it keeps coming', async () => {
    const s = await start('watch', endless(200, { head: '{"type":"ADDED","object":{"metadata":{"name":"', contentType: 'application/json' }));
    const before = retainedBytes();
    const watch = watchOf(s, { maxLineBytes: MiB });
    await waitFor('the oversize report', () => watch.errors().length > 0);
    const samples: number[] = [];
    for (const mark of [32, 64, 96, 128]) {
      await waitFor(`${mark} MiB streamed`, () => s.written.watch > mark * MiB, 15_000);
      samples.push(retainedBytes() - before);
    }
    expect(watch.end).toEqual({});
    expect(watch.errors()).toHaveLength(1);
    expect(watch.errors()[0]!.reason).toBe('MalformedLine');
    expect(watch.errors()[0]!.message).toMatch(/^watch \/api\/v1\/namespaces\/default\/configmaps: a line passed the 1 MiB limit \(\d+ bytes; option maxLineBytes\); skipped$/);
    expect(Math.max(...samples)).toBeLessThan(BUDGET);
  });

  const lineCases: { name: string; behaviour: Behaviour; message: RegExp }[] = [
    { name: 'a slow-drip line', behaviour: drip(200, { chunk: Buffer.alloc(8 * 1024, 0x61) }), message: /passed the 64 KiB limit/ },
    { name: 'garbage (no newline, then the end)', behaviour: garbage(200), message: /ended inside a line \(4096 bytes\)/ },
    { name: 'a wrong content type', behaviour: wrongContentType(200), message: /not JSON/ },
  ];
  for (const c of lineCases) {
    it(`watch: ${c.name} → MalformedLine`, async () => {
      const s = await start('watch', c.behaviour);
      const watch = watchOf(s, { maxLineBytes: 64 * 1024 });
      await waitFor('the report', () => watch.errors().length > 0);
      expect(watch.errors()[0]!.reason).toBe('MalformedLine');
      expect(watch.errors()[0]!.message).toMatch(c.message);
    });
  }
});

/** Discovery whose `path` answers with `behaviour`, the rest as a small well-behaved server. */
function discoveryWith(path: string, behaviour: Behaviour): Behaviour {
  const good = behave.discovery();
  return (request, response) => (request.url.pathname === path ? behaviour(request, response) : good(request, response));
}

const json = (body: string): Behaviour => (_request, response) => {
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end(body);
};

describe('hostile server: discovery', () => {
  const cases: { name: string; path: string; behaviour: Behaviour; reason: ErrorReason; message: RegExp }[] = [
    { name: 'endless /api', path: '/api', behaviour: endless(200), reason: 'ResponseTooLarge', message: /^GET \/api: the response is larger than the 4 MiB limit .*option maxDocumentBytes/ },
    { name: 'endless 503 body on /apis', path: '/apis', behaviour: endless(503), reason: 'ResponseTooLarge', message: /^GET \/apis \(HTTP 503 error body\): .*1 MiB limit/ },
    { name: 'slow-drip /apis', path: '/apis', behaviour: drip(200), reason: 'ResponseTooLarge', message: /256 KiB limit/ },
    { name: 'garbage /api', path: '/api', behaviour: garbage(200), reason: 'MalformedLine', message: /GET \/api: the response is not JSON/ },
    { name: 'HTML /apis', path: '/apis', behaviour: wrongContentType(200), reason: 'MalformedLine', message: /not JSON/ },
    { name: 'truncated /api', path: '/api', behaviour: truncated(200, '{"kind":"APIVersions","versions":["v1"]}'), reason: 'NetworkError', message: /closed before/ },
    { name: '/api answering null', path: '/api', behaviour: json('null'), reason: 'MalformedLine', message: /^GET \/api: the response is not an APIVersions \(null\)$/ },
    { name: '/apis with groups of the wrong type', path: '/apis', behaviour: json('{"groups":"x"}'), reason: 'MalformedLine', message: /not an APIGroupList \(groups is a string\)/ },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.reason} from discover()`, async () => {
      const s = await start('discovery', discoveryWith(c.path, c.behaviour));
      const measured = c.reason === 'ResponseTooLarge';
      const before = measured ? retainedBytes() : 0;
      const error = await failure(discover(s.kc, c.name.startsWith('slow') ? { maxDocumentBytes: 256 * 1024 } : {}));
      expect(error.reason).toBe(c.reason);
      expect(error.message).toMatch(c.message);
      expect(s.written.discovery).toBeLessThan(4 * MiB + IN_FLIGHT);
      if (measured) expect(retainedBytes() - before).toBeLessThan(BUDGET);
    });
  }

  it('a group version answering null (or a huge body) is a failure of that group version, as a 503 is; the rest is kept', async () => {
    for (const [behaviour, reason] of [
      [json('null'), 'MalformedLine'],
      [endless(200), 'ResponseTooLarge'],
      [status(503, 'ServiceUnavailable', 'down'), 'ServerError'],
    ] as const) {
      const s = await start('discovery', discoveryWith('/api/v1', behaviour));
      const found = await lastValueFrom(discover(s.kc));
      expect(found.failures.map((f) => [f.groupVersion, f.error.reason])).toEqual([['v1', reason]]);
      await s.close();
      server = undefined;
    }
  });

  it('an empty resource list ("resources": null) is not a failure', async () => {
    const s = await start('discovery', discoveryWith('/api/v1', json('{"kind":"APIResourceList","groupVersion":"v1","resources":null}')));
    const found = await lastValueFrom(discover(s.kc));
    expect(found.failures).toEqual([]);
    expect(found.all).toEqual([]);
  });
});

describe('hostile server: error Status messages', () => {
  it('a Status message of 512 KiB is printed as its first 1 KiB and its size', async () => {
    const s = await start('list', status(500, 'InternalError', 'x'.repeat(512 * 1024)));
    const error = await failure(httpListWatch(s.kc, target).list({}));
    expect(error.reason).toBe('ServerError');
    expect(error.message).toBe(`${'x'.repeat(1024)}… (524288 bytes)`);
  });

  it('a watch ERROR event with a huge message reaches errors$ capped', async () => {
    const huge = { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'y'.repeat(200_000), reason: 'InternalError', code: 500 } };
    server = await hostileServer({ list: behave.list([]), watch: behave.watch([huge]) });
    const errors: InformerError[] = [];
    subscriptions.push(informer(server.kc, ConfigMap, { namespace: 'default', backoff: { initialMs: 10_000 } }).errors$.subscribe((e) => errors.push(e)));
    await waitFor('the ERROR event', () => errors.length > 0);
    expect(errors[0]!.message).toBe(`${'y'.repeat(1024)}… (200000 bytes)`);
  });
});

describe('hostile server: recovery once the server behaves', () => {
  const fast = { backoff: { initialMs: 10, maxMs: 50 }, namespace: 'default' } as const;
  const cases: { name: string; kind: RequestKind; behaviour: Behaviour; reason: ErrorReason; http?: HttpTransportOptions }[] = [
    { name: 'endless list', kind: 'list', behaviour: endless(200, { head: LIST_BODY_HEAD }), reason: 'ResponseTooLarge', http: { maxListBytes: MiB } },
    { name: 'endless 500 on the watch', kind: 'watch', behaviour: endless(500), reason: 'ResponseTooLarge' },
    { name: 'a watch line that never ends', kind: 'watch', behaviour: endless(200, { head: '{"type":"ADDED"' }), reason: 'MalformedLine', http: { maxLineBytes: MiB } },
    { name: 'garbage list', kind: 'list', behaviour: garbage(200), reason: 'MalformedLine' },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason} on errors$, then the informer converges`, async () => {
      server = await hostileServer({ list: behave.list([configMap('a', '10')]), watch: behave.watch([{ type: 'ADDED', object: configMap('b', '11') }]), [c.kind]: c.behaviour });
      const cache = informer(server.kc, ConfigMap, { ...fast, http: c.http });
      const errors: InformerError[] = [];
      let keys: string[] = [];
      subscriptions.push(
        cache.errors$.subscribe((e) => errors.push(e)),
        cache.store$.subscribe((st) => (keys = st.keys().sort())),
      );
      await waitFor(`${c.reason} on errors$`, () => errors.some((e) => e.reason === c.reason));
      server.on('list', behave.list([configMap('a', '10')]));
      server.on('watch', behave.watch([{ type: 'ADDED', object: configMap('b', '11') }]));
      await waitFor('the store to converge', () => keys.join() === 'default/a,default/b');
    });
  }

  it('discovery: an endless /api fails, the next discovery succeeds', async () => {
    const s = await start('discovery', discoveryWith('/api', endless(200)));
    expect((await failure(discover(s.kc))).reason).toBe('ResponseTooLarge');
    s.on('discovery', behave.discovery());
    const found = await lastValueFrom(discover(s.kc));
    expect(found.resources.map((r) => r.plural)).toEqual(['configmaps']);
  });
});
