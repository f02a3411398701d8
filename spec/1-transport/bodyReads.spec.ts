// A sink that keeps no bytes (the protobuf list decoder) has the socket's reads of its body freed as they are read
// (body.ts `Reads`, a listener on the socket's 'data'). Over HTTP/1.1 with keep-alive, the agent hands the socket on
// to the next request when the response on the wire ends; a gzip body may still be inflating then. The listener must
// stop at that end: else it frees (detaches) the next response's reads before its parser sees them, and that request
// hangs (found by review; the second request never answered before the fix).
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { readBody, type BodySink } from '../../src/1-transport/http/body.ts';
import { BodyProgress } from '../../src/1-transport/http/progress.ts';
import { decodeResponse } from '../../src/1-transport/http/encoding.ts';
import type { HttpResponse } from '../../src/1-transport/http2/response.ts';

describe('the reads of a body whose sink keeps no bytes', () => {
  it('are freed only until the response on the wire ends: the next response on the same socket reads whole', async () => {
    const page = gzipSync(randomBytes(4 << 20)); // incompressible: the inflater makes many chunks
    const second = 'x'.repeat(100_000);
    const server = http.createServer((request, response) => {
      if (request.url === '/page') {
        response.writeHead(200, { 'content-encoding': 'gzip', 'content-length': page.length });
        response.end(page);
      } else {
        response.writeHead(200, { 'content-length': second.length });
        response.end(second);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const outcome = await new Promise<{ reused: boolean; bytes: number; pageChunks: number }>((resolve, reject) => {
        let pageChunks = 0;
        let firstSocket: unknown;
        agent.once('free', (socket) => {
          // The page's response has ended on the wire; its body may still be inflating. The next request reuses the socket.
          const next = http.get({ host: '127.0.0.1', port, path: '/other', agent }, (response) => {
            const reused = response.socket === socket && socket === firstSocket;
            let bytes = 0;
            response.on('data', (chunk: Buffer) => (bytes += chunk.length));
            response.on('end', () => resolve({ reused, bytes, pageChunks }));
          });
          next.on('error', reject);
        });
        http
          .get({ host: '127.0.0.1', port, path: '/page', agent }, (response) => {
            firstSocket = response.socket;
            const decoded = decodeResponse(response as unknown as HttpResponse, 'list /page', 'list');
            if (decoded instanceof InformerError) return reject(decoded);
            const sink: BodySink = {
              keepsNoBytes: true,
              chunk: () => {
                pageChunks++;
                // A sink slower than the wire, so that the inflater is still at work when the wire's response ends.
                const until = performance.now() + 1;
                while (performance.now() < until);
              },
              chunksDone: () => pageChunks,
              end: () => undefined,
            };
            readBody(decoded, { maxBytes: 64 << 20, what: 'list /page', option: 'maxListBytes' }, sink, reject, 'list');
          })
          .on('error', reject);
      });
      expect(outcome.reused).toBe(true);
      expect(outcome.bytes).toBe(second.length);
      expect(outcome.pageChunks).toBeGreaterThan(1);
    } finally {
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

// A body's limit is checked before a chunk is kept or handed on: the chunk that passes it is neither copied into a
// whole body (an allocation of its size, however large) nor given to a sink that asks for each chunk (a list page); the
// response is destroyed, so the download stops; and a connection that closed early is an error, not a short body.
describe('a body past its limit, or cut short', () => {
  /** A response nothing reads from the network: its chunks are emitted by the test. */
  function fakeResponse() {
    const response = Object.assign(new EventEmitter(), {
      statusCode: 200,
      headers: {},
      complete: false,
      setTimeout: () => response,
      destroy: () => response,
      pause: () => response,
      resume: () => response,
    });
    return response;
  }
  const limit = { maxBytes: 10, what: 'list', option: 'maxListBytes' } as const;

  it('declared by Content-Length one byte over: refused before any of it is read, and the response destroyed', () => {
    const response = Object.assign(fakeResponse(), { headers: { 'content-length': String(limit.maxBytes + 1) } });
    const destroy = vi.spyOn(response, 'destroy');
    const errors: InformerError[] = [];
    readBody(
      response as unknown as HttpResponse,
      limit,
      () => expect.fail('no body'),
      (e) => errors.push(e),
      'list',
    );
    expect(errors.map((e) => [e.reason, e.message.includes(`Content-Length ${limit.maxBytes + 1}`)])).toEqual([['ResponseTooLarge', true]]);
    expect(destroy).toHaveBeenCalledTimes(1);
    const exact = Object.assign(fakeResponse(), { headers: { 'content-length': String(limit.maxBytes) } });
    readBody(
      exact as unknown as HttpResponse,
      limit,
      () => undefined,
      (e) => errors.push(e),
      'list',
    );
    expect(errors).toHaveLength(1);
  });

  it('read past the limit: the response is destroyed (the download stops), and later chunks are ignored', () => {
    const response = fakeResponse();
    const destroy = vi.spyOn(response, 'destroy');
    const errors: InformerError[] = [];
    const got: number[] = [];
    const sink: BodySink = { chunk: (b) => got.push(b.length), end: () => expect.fail('no end'), wantsEachChunk: () => true };
    readBody(response as unknown as HttpResponse, limit, sink, (e) => errors.push(e), 'list');
    response.emit('data', Buffer.alloc(8, 0x61));
    response.emit('data', Buffer.alloc(8, 0x61));
    expect(destroy).toHaveBeenCalledTimes(1);
    response.emit('data', Buffer.alloc(1, 0x61));
    response.emit('close');
    expect([got, errors.map((e) => e.reason)]).toEqual([[8], ['ResponseTooLarge']]);
  });

  it('a connection closed before the response was complete is an error, never a body cut short', () => {
    const response = fakeResponse();
    const errors: InformerError[] = [];
    readBody(
      response as unknown as HttpResponse,
      limit,
      () => expect.fail('no body'),
      (e) => errors.push(e),
      'list',
    );
    response.emit('data', Buffer.from('{"a":'));
    response.emit('close');
    expect(errors.map((e) => e.reason)).toEqual(['NetworkError']);
    const complete = fakeResponse();
    const bodies: string[] = [];
    readBody(
      complete as unknown as HttpResponse,
      limit,
      (b) => bodies.push(b.toString()),
      (e) => errors.push(e),
      'list',
    );
    complete.emit('data', Buffer.from('{}'));
    complete.complete = true;
    complete.emit('close');
    expect([bodies, errors.length]).toEqual([['{}'], 1]);
  });

  it('is not handed to a sink that asks for each chunk', () => {
    const response = fakeResponse();
    const got: number[] = [];
    const errors: InformerError[] = [];
    const sink: BodySink = { chunk: (b) => got.push(b.length), end: () => undefined, wantsEachChunk: () => true };
    readBody(response as unknown as HttpResponse, limit, sink, (e) => errors.push(e), 'list');
    response.emit('data', Buffer.alloc(8, 0x61));
    response.emit('data', Buffer.alloc(8, 0x61));
    expect(got).toEqual([8]);
    expect(errors.map((e) => e.reason)).toEqual(['ResponseTooLarge']);
  });

  it('is not copied into a whole body: nothing over the limit is allocated for it', () => {
    const response = fakeResponse();
    const errors: InformerError[] = [];
    const allocUnsafe = vi.spyOn(Buffer, 'allocUnsafe');
    try {
      readBody(
        response as unknown as HttpResponse,
        limit,
        () => expect.fail('no body'),
        (e) => errors.push(e),
        'list',
      );
      response.emit('data', Buffer.alloc(8, 0x61));
      response.emit('data', Buffer.alloc(1 << 20, 0x61));
      expect(Math.max(0, ...allocUnsafe.mock.calls.map(([size]) => size))).toBeLessThanOrEqual(limit.maxBytes);
    } finally {
      allocUnsafe.mockRestore();
    }
    expect(errors.map((e) => e.reason)).toEqual(['ResponseTooLarge']);
  });

  it('its progress windows stop with it: after a body over its limit, or a complete one, no window is left to fire', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const errors: InformerError[] = [];
      const over = fakeResponse();
      const progress = new BodyProgress(1_000, 10, 'list', 'list');
      readBody(
        over as unknown as HttpResponse,
        limit,
        () => expect.fail('no body'),
        (e) => errors.push(e),
        'list',
        progress,
      );
      over.emit('data', Buffer.alloc(11, 0x61));
      expect(vi.getTimerCount()).toBe(0);
      const whole = fakeResponse();
      const bodies: number[] = [];
      readBody(
        whole as unknown as HttpResponse,
        limit,
        (b) => bodies.push(b.length),
        (e) => errors.push(e),
        'list',
        new BodyProgress(1_000, 10, 'list', 'list'),
      );
      whole.emit('data', Buffer.alloc(10, 0x61));
      whole.complete = true;
      whole.emit('close');
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(10_000);
      expect([bodies, errors.map((e) => e.reason)]).toEqual([[10], ['ResponseTooLarge']]);
    } finally {
      vi.useRealTimers();
    }
  });
});
