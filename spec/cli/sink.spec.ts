import { afterEach, describe, expect, it, vi } from 'vitest';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpSink, MAX_SINK_RETRY_AFTER_SECONDS, sinkRetryAfterMs } from '../../src/cli/sink.ts';
import { parseSinkUrl, type SinkTarget } from '../../src/cli/sinkUrl.ts';
import { slackEscape, slackSink } from '../../src/cli/slack.ts';
import { MAX_TIMER_DELAY_MS } from '../../src/util/scheduleAfter.ts';

/** A receiver on 127.0.0.1 that holds every response until released (or answers with `status`). */
async function holdingReceiver() {
  const bodies: string[] = [];
  const held: http.ServerResponse[] = [];
  let status = 0;
  let arrived: () => void = () => undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      if (status) res.writeHead(status).end();
      else held.push(res);
      arrived();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const parsed = parseSinkUrl('--webhook', `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
  if (!parsed.ok) throw new Error(parsed.error);
  return {
    target: parsed.target as SinkTarget,
    bodies,
    /** Resolves once `n` requests have arrived. */
    requests: (n: number) => new Promise<void>((resolve) => (arrived = () => bodies.length >= n && resolve())).then(() => undefined),
    /** Answers the held requests, and all later ones, with `code`. */
    answer(code: number) {
      status = code;
      for (const res of held.splice(0)) res.writeHead(code).end();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('HttpSink', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('bounds the queue by bytes, drops the oldest, and reports drops once per interval, not per event', async () => {
    const rx = await holdingReceiver();
    cleanups.push(rx.close);
    const lines: string[] = [];
    const sink = new HttpSink({
      kind: 'webhook',
      target: rx.target,
      maxBatch: 1,
      encode: ([i]) => i ?? '',
      report: (l) => lines.push(l),
      maxQueueBytes: 100,
      reportIntervalMs: 60_000,
    });
    const first = rx.requests(1);
    sink.send('e0'.padEnd(30, '.'));
    await first;
    for (let i = 1; i <= 9; i++) sink.send(`e${i}`.padEnd(30, '.'));
    // 30 bytes in flight + at most 70 waiting: 2 wait, the 7 before them were dropped; told once.
    expect(lines).toEqual([`webhook ${rx.target.origin}: 1 event dropped as the queue was full; 3 waiting`]);
    const rest = rx.requests(3);
    rx.answer(204);
    await rest;
    expect(rx.bodies.map((b) => b.slice(0, 2))).toEqual(['e0', 'e8', 'e9']);
    const summary = await sink.close(Date.now() + 1000);
    expect(summary).toEqual({ delivered: 3, dropped: 7, rejected: 0, unsent: 0 });
    expect(lines.at(-1)).toBe(`webhook ${rx.target.origin}: 6 events dropped as the queue was full; 0 waiting`);
    expect(HttpSink.describe(sink.label, summary)).toBe(
      `webhook ${rx.target.origin}: 3 events delivered, 7 not (7 dropped as the queue was full)`,
    );
  });

  it('gives up a batch the receiver refuses (4xx) and goes on; a flush that runs out of time counts what was unsent', async () => {
    const rx = await holdingReceiver();
    cleanups.push(rx.close);
    const lines: string[] = [];
    const sink = new HttpSink({ kind: 'webhook', target: rx.target, maxBatch: 1, encode: ([i]) => i ?? '', report: (l) => lines.push(l) });
    rx.answer(400);
    const two = rx.requests(2);
    sink.send('a');
    sink.send('b');
    await two;
    expect(lines).toEqual([`webhook ${rx.target.origin}: 1 failed attempt (last: HTTP 400; 1 event given up); 1 waiting`]);
    rx.answer(0); // hold from now on
    const third = rx.requests(3);
    sink.send('c');
    await third;
    expect(await sink.close(Date.now() + 50)).toEqual({ delivered: 0, dropped: 0, rejected: 2, unsent: 1 });
  });

  it("a backoff past Node's timer limit waits that limit (the one cap), not 1 ms again and again", async () => {
    const rx = await holdingReceiver();
    cleanups.push(rx.close);
    rx.answer(500);
    const day = 24 * 3600 * 1000;
    // Records the long delays handed to setTimeout (the sink's wait after a failure); runs each capped, so that
    // without the cap the test fails on the delay recorded, not on a flood of retries.
    const realSetTimeout = globalThis.setTimeout;
    let longDelay: (ms: number) => void = () => undefined;
    const waited = new Promise<number>((resolve) => (longDelay = resolve));
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((work: () => void, ms?: number) => {
      if ((ms ?? 0) > 1_000_000) longDelay(ms ?? 0);
      return realSetTimeout(work, Math.min(ms ?? 0, MAX_TIMER_DELAY_MS));
    }) as typeof setTimeout);
    try {
      const sink = new HttpSink({
        ...{ kind: 'webhook', target: rx.target, maxBatch: 1, encode: ([i]) => i ?? '', report: () => undefined },
        backoff: { initialMs: 60 * day, maxMs: 60 * day },
      });
      sink.send('a');
      expect(await waited).toBe(MAX_TIMER_DELAY_MS);
      expect(rx.bodies).toEqual(['a']);
      expect(await sink.close(Date.now() + 50)).toEqual({ delivered: 0, dropped: 0, rejected: 0, unsent: 1 });
    } finally {
      spy.mockRestore();
    }
  });

  it('timeoutMs: Infinity is no timeout (it failed every request, as AbortSignal.timeout refuses it)', async () => {
    const rx = await holdingReceiver();
    cleanups.push(rx.close);
    rx.answer(204);
    const lines: string[] = [];
    const sink = new HttpSink({
      ...{ kind: 'webhook', target: rx.target, maxBatch: 1, encode: ([i]) => i ?? '', report: (l) => lines.push(l) },
      timeoutMs: Infinity,
    });
    sink.send('a');
    expect(await sink.close(Date.now() + 5_000)).toEqual({ delivered: 1, dropped: 0, rejected: 0, unsent: 0 });
    expect(lines).toEqual([]);
  });

  it('an encoder that throws loses its batch as a refusal does, told; the next batch goes on', async () => {
    const rx = await holdingReceiver();
    cleanups.push(rx.close);
    rx.answer(204);
    const lines: string[] = [];
    const encode = ([i]: readonly string[]) => {
      if (i === 'bad') throw new Error('no encoding');
      return i ?? '';
    };
    const sink = new HttpSink({ kind: 'webhook', target: rx.target, maxBatch: 1, encode, report: (l) => lines.push(l) });
    const one = rx.requests(1);
    sink.send('bad');
    sink.send('good');
    await one;
    expect(await sink.close(Date.now() + 5_000)).toEqual({ delivered: 1, dropped: 0, rejected: 1, unsent: 0 });
    expect(rx.bodies).toEqual(['good']);
    expect(lines).toEqual([
      `webhook ${rx.target.origin}: 1 failed attempt (last: cannot encode the batch: no encoding; 1 event given up); 1 waiting`,
    ]);
  });

  it('slack: one escaped line per change, what waits behind a message goes in the next one', async () => {
    const rx = await holdingReceiver();
    cleanups.push(rx.close);
    const sink = slackSink(rx.target, () => undefined);
    const record = { time: '', type: 'ADDED', resource: 'pods', name: 'x' } as const;
    const first = rx.requests(1);
    sink.accept(record, 'line 0 <!channel> & co');
    await first;
    for (let i = 1; i <= 4; i++) sink.accept(record, `line ${i}`);
    const second = rx.requests(2);
    rx.answer(200);
    await second;
    expect(rx.bodies.map((b) => JSON.parse(b) as unknown)).toEqual([
      { text: 'line 0 &lt;!channel&gt; &amp; co' },
      { text: 'line 1\nline 2\nline 3\nline 4' },
    ]);
    expect(await sink.close(Date.now() + 1000)).toEqual({ delivered: 5, dropped: 0, rejected: 0, unsent: 0 });
    expect(slackEscape('<a&b>')).toBe('&lt;a&amp;b&gt;');
  });
});

describe("a receiver's Retry-After (the one parser, capped at 60 s for a sink)", () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it.each([
    [429, '5', 5_000],
    [429, ' 12 ', 12_000],
    [429, '120', 60_000],
    [429, '9'.repeat(40), 60_000],
    [503, '7', 7_000],
    // An HTTP date, as the transport reads it (the sinks took numbers only).
    [429, 'Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    [503, 'Wed, 01 Jan 2025 01:00:00 GMT', 60_000],
    // No wait asked (the backoff decides): zero, past, unreadable, overlong, missing, another status.
    [429, '0', undefined],
    [429, '-3', undefined],
    [429, 'Tue, 31 Dec 2024 23:59:00 GMT', undefined],
    [429, 'soon', undefined],
    [429, '1e300', undefined], // not whole digits (client-go's strconv.Atoi)
    [429, '9'.repeat(65), undefined],
    [429, null, undefined],
    [500, '5', undefined],
    [408, '5', undefined],
  ] as const)('%i with Retry-After %j: %s ms', (status, header, ms) => {
    expect(MAX_SINK_RETRY_AFTER_SECONDS).toBe(60);
    expect(sinkRetryAfterMs(status, header, now)).toBe(ms);
  });
});
