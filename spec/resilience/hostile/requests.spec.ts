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
import { describe, expect, it } from 'vitest';
import { httpListWatch } from '../../../src/pipeline.ts';
import { waitFor } from '../harness/live.ts';
import { MiB, retainedBytes } from './memory.ts';
import { drip, endless, garbage, huge, truncated, wrongContentType, type Behaviour, type RequestKind } from './server.ts';
import { BUDGET, IN_FLIGHT, LIST_BODY_HEAD, failure, perTest, target, watchOf, type Case } from './support.ts';

const { subscriptions, start } = perTest();

const listCases: Case[] = [
  {
    name: 'endless body',
    kind: 'list',
    behaviour: endless(200, { head: LIST_BODY_HEAD }),
    http: { maxListBytes: 4 * MiB },
    reason: 'ResponseTooLarge',
    message:
      /^list \/api\/v1\/namespaces\/default\/configmaps: the response is larger than the 4 MiB limit \(\d+ bytes read\); aborted \(option maxListBytes\)$/,
  },
  {
    name: 'endless body on a continue page',
    kind: 'continue',
    behaviour: endless(200, { head: LIST_BODY_HEAD }),
    http: { maxListBytes: 4 * MiB },
    reason: 'ResponseTooLarge',
    message: /larger than the 4 MiB limit/,
  },
  {
    name: 'huge Content-Length',
    kind: 'list',
    behaviour: huge(200, 1024 * MiB),
    reason: 'ResponseTooLarge',
    message: /larger than the 256 MiB limit \(Content-Length 1073741824\)/,
  },
  {
    name: 'slow drip',
    kind: 'list',
    behaviour: drip(200, { head: LIST_BODY_HEAD }),
    http: { maxListBytes: 128 * 1024 },
    reason: 'ResponseTooLarge',
    message: /larger than the 128 KiB limit/,
  },
  { name: 'garbage', kind: 'list', behaviour: garbage(200), reason: 'MalformedLine', message: /the response is not JSON \(4096 bytes/ },
  {
    name: 'wrong content type',
    kind: 'list',
    behaviour: wrongContentType(200),
    reason: 'MalformedLine',
    message: /the response is not JSON/,
  },
  {
    name: 'truncated',
    kind: 'list',
    behaviour: truncated(200, `${LIST_BODY_HEAD}]}`),
    reason: 'NetworkError',
    message: /closed before the response was complete/,
  },
  {
    name: 'endless error body (500)',
    kind: 'list',
    behaviour: endless(500),
    reason: 'ResponseTooLarge',
    status: 500,
    message: /\(HTTP 500 error body\): the response is larger than the 1 MiB limit .*option maxErrorBodyBytes/,
  },
  {
    name: 'huge error body (503)',
    kind: 'list',
    behaviour: huge(503, 64 * MiB),
    reason: 'ResponseTooLarge',
    status: 503,
    message: /1 MiB limit \(Content-Length 67108864\)/,
  },
  {
    name: 'wrong content type error (502)',
    kind: 'list',
    behaviour: wrongContentType(502),
    reason: 'ServerError',
    status: 502,
    message: /^HTTP 502$/,
  },
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
  {
    name: 'endless error body (500)',
    kind: 'watch',
    behaviour: endless(500),
    reason: 'ResponseTooLarge',
    status: 500,
    message: /^watch \/api\/v1\/namespaces\/default\/configmaps \(HTTP 500 error body\): the response is larger than the 1 MiB limit/,
  },
  {
    name: 'huge error body (503)',
    kind: 'watch',
    behaviour: huge(503, 64 * MiB),
    reason: 'ResponseTooLarge',
    status: 503,
    message: /Content-Length 67108864/,
  },
  {
    name: 'slow-drip error body (500)',
    kind: 'watch',
    behaviour: drip(500),
    http: { maxErrorBodyBytes: 64 * 1024 },
    reason: 'ResponseTooLarge',
    status: 500,
    message: /64 KiB limit/,
  },
  {
    name: 'truncated',
    kind: 'watch',
    behaviour: truncated(200, '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED"'),
    reason: 'NetworkError',
    message: /closed mid-stream/,
  },
];

describe('hostile server: watch', () => {
  for (const c of watchCases) {
    it(`watch: ${c.name} → ${c.reason}`, async () => {
      const s = await start(c.kind, c.behaviour);
      const before = retainedBytes();
      const watch = watchOf(s, subscriptions, c.http);
      await waitFor('the watch to fail', () => watch.end.error !== undefined);
      expect(watch.end.error!.reason).toBe(c.reason);
      expect(watch.end.error!.message).toMatch(c.message);
      if (c.status !== undefined) expect(watch.end.error!.status).toBe(c.status);
      expect(s.written.watch).toBeLessThan(MiB + IN_FLIGHT);
      expect(retainedBytes() - before).toBeLessThan(BUDGET);
    });
  }

  it('a line that never ends is reported once, as it passes the limit, and memory stays bounded while it keeps coming', async () => {
    const s = await start(
      'watch',
      endless(200, { head: '{"type":"ADDED","object":{"metadata":{"name":"', contentType: 'application/json' }),
    );
    const before = retainedBytes();
    const watch = watchOf(s, subscriptions, { maxLineBytes: MiB });
    await waitFor('the oversize report', () => watch.errors().length > 0);
    const samples: number[] = [];
    for (const mark of [32, 64, 96, 128]) {
      await waitFor(`${mark} MiB streamed`, () => s.written.watch > mark * MiB, 15_000);
      samples.push(retainedBytes() - before);
    }
    expect(watch.end).toEqual({});
    expect(watch.errors()).toHaveLength(1);
    expect(watch.errors()[0]!.reason).toBe('MalformedLine');
    expect(watch.errors()[0]!.message).toMatch(
      /^watch \/api\/v1\/namespaces\/default\/configmaps: a line passed the 1 MiB limit \(\d+ bytes; option maxLineBytes\); watch ended$/,
    );
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
      const watch = watchOf(s, subscriptions, { maxLineBytes: 64 * 1024 });
      await waitFor('the report', () => watch.errors().length > 0);
      expect(watch.errors()[0]!.reason).toBe('MalformedLine');
      expect(watch.errors()[0]!.message).toMatch(c.message);
    });
  }
});

/** Discovery whose `path` answers with `behaviour`, the rest as a small well-behaved server. */
