/**
 * Sinks against hostile receivers, at default options: a 200 whose body never
 * ends, a 200 whose body stalls after its first byte, a 500 whose body never
 * ends. The sink reads the status, never the body: each delivery goes on at
 * once, and the receiver sees its connection closed long before it could have
 * pushed much (the bytes it managed to write are the memory we could have
 * held; it stops, and fails the test, at {@link CAP}).
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpSink } from '../../src/cli/sink.ts';
import { parseSinkUrl, type SinkTarget } from '../../src/cli/sinkUrl.ts';
import { webhookSink } from '../../src/cli/webhook.ts';

/** A receiver that has written this much of one body has been read far beyond any bound: it ends the body there. */
const CAP = 64 * 1024 * 1024;
/** What one response may have pushed into kernel and client buffers before the client hung up. */
const BOUND = 8 * 1024 * 1024;

type Body = 'endless' | 'stalled';

interface Hostile {
  readonly target: SinkTarget;
  readonly bodies: string[];
  /** Per response: bytes written, and whether the client closed it before the body ended. */
  readonly responses: { written: number; closedByClient: boolean; capped: boolean }[];
  /** Resolves once `n` responses have been closed (by either side). */
  closed(n: number): Promise<void>;
  close(): Promise<void>;
}

async function hostile(answer: (index: number) => { status: number; body: Body }): Promise<Hostile> {
  const bodies: string[] = [];
  const responses: Hostile['responses'] = [];
  let closedCount = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const index = bodies.length;
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      const { status, body } = answer(index);
      const seen = { written: 0, closedByClient: false, capped: false };
      responses.push(seen);
      res.on('close', () => {
        seen.closedByClient = !res.writableFinished;
        closedCount++;
        for (const w of waiters.filter((w) => closedCount >= w.n)) w.resolve();
      });
      res.writeHead(status, { 'content-type': 'text/plain' });
      if (body === 'stalled') {
        // One byte, then nothing more, ever (until the client goes away).
        res.write('x');
        seen.written = 1;
        return;
      }
      const pump = () => {
        while (!res.destroyed) {
          if (seen.written >= CAP) {
            seen.capped = true;
            return void res.end();
          }
          seen.written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const parsed = parseSinkUrl('--webhook', `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
  if (!parsed.ok) throw new Error(parsed.error);
  return {
    target: parsed.target,
    bodies,
    responses,
    closed: (n) => (closedCount >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const record = (name: string) => ({ time: '', type: 'ADDED', resource: 'configmaps', name }) as const;

describe('sinks against hostile receivers (default options)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('a 200 with a never-ending body: delivered (the status is the receipt), the body cancelled at once, memory bounded', async () => {
    const rx = await hostile(() => ({ status: 200, body: 'endless' }));
    cleanups.push(rx.close);
    const lines: string[] = [];
    const sink = webhookSink(rx.target, (l) => lines.push(l));
    for (const name of ['a', 'b', 'c']) sink.accept(record(name), name);
    await rx.closed(3);
    expect(await sink.close(Date.now() + 3000)).toEqual({ delivered: 3, dropped: 0, rejected: 0, unsent: 0 });
    expect(rx.bodies.map((b) => (JSON.parse(b) as { name: string }).name)).toEqual(['a', 'b', 'c']);
    for (const r of rx.responses) {
      expect(r.capped).toBe(false);
      expect(r.closedByClient).toBe(true);
      expect(r.written).toBeLessThan(BOUND);
    }
    expect(lines).toEqual([]);
  });

  it('a 200 whose body stalls after one byte: each delivery goes on at once, not after the request timeout', async () => {
    const rx = await hostile(() => ({ status: 200, body: 'stalled' }));
    cleanups.push(rx.close);
    const sink = webhookSink(rx.target, () => undefined);
    for (const name of ['a', 'b', 'c', 'd', 'e']) sink.accept(record(name), name);
    // Waiting on the body would cost the 10 s request timeout per event: 50 s, past this test's own timeout (30 s).
    await rx.closed(5);
    expect(rx.responses.map((r) => r.closedByClient)).toEqual([true, true, true, true, true]);
    expect(await sink.close(Date.now() + 3000)).toEqual({ delivered: 5, dropped: 0, rejected: 0, unsent: 0 });
  });

  it('a 500 with a never-ending body is a failure, retried with backoff; memory bounded; then a 200 delivers', async () => {
    const rx = await hostile((i) => (i === 0 ? { status: 500, body: 'endless' } : { status: 200, body: 'stalled' }));
    cleanups.push(rx.close);
    const lines: string[] = [];
    const sink = new HttpSink({ kind: 'webhook', target: rx.target, maxBatch: 1, encode: ([i]) => i ?? '', report: (l) => lines.push(l) });
    sink.send('{"n":1}');
    await rx.closed(2);
    expect(rx.responses[0]).toEqual({ written: expect.any(Number), closedByClient: true, capped: false });
    expect(rx.responses[0]!.written).toBeLessThan(BOUND);
    expect(lines).toEqual([`webhook ${rx.target.origin}: 1 failed attempt (last: HTTP 500); 1 waiting`]);
    expect(await sink.close(Date.now() + 3000)).toEqual({ delivered: 1, dropped: 0, rejected: 0, unsent: 0 });
    expect(rx.bodies).toEqual(['{"n":1}', '{"n":1}']);
  });
});
