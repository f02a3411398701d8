/**
 * The hostile suite over HTTP/2 (#31.6), against a server that writes raw frames (./http2Server.ts):
 * a refused stream is sent again on another connection, not on the one that refused it; HTTP/2 protocol
 * errors and GOAWAYs with an error code are `ProtocolError`s that say what the server did, before the
 * response headers and in the middle of a body, instead of a generic network fault.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { firstValueFrom, lastValueFrom, tap } from 'rxjs';
import { ConfigMap, type ErrorReason } from '../../../src/index.ts';
import { getJson, httpListWatch } from '../../../src/1-transport/httpTransport.ts';
import { explain } from '../../../src/cli/explain.ts';
import { CODE, FRAME, OK_JSON_HEADERS, hostileHttp2Server, type HostileHttp2Server, type Http2Wire } from './http2Server.ts';
import { failure, LIST_BODY_HEAD } from './support.ts';

const H2 = { protocol: 'h2' } as const;
const API_VERSIONS = { kind: 'APIVersions', versions: ['v1'] };
const target = { resource: ConfigMap, namespace: 'default' } as const;

const servers: HostileHttp2Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function serve(onStream: (wire: Http2Wire, stream: number, connection: number) => void): Promise<HostileHttp2Server> {
  const server = await hostileHttp2Server(onStream);
  servers.push(server);
  return server;
}

describe('REFUSED_STREAM: the server did not process the stream', () => {
  it('is sent again on another connection, not on the one that refused it (which refuses every stream)', async () => {
    const server = await serve((wire, stream, connection) =>
      connection === 0 ? wire.rst(stream, CODE.REFUSED_STREAM) : wire.json(stream, API_VERSIONS),
    );
    expect(await firstValueFrom(getJson(server.kc, '/api', H2))).toEqual(API_VERSIONS);
    expect(server.streams).toEqual(['0:1', '1:1']);
    expect(server.connections).toBe(2);
  });

  it('refused on every connection: sent twice more at most, then a NetworkError that says so', async () => {
    const server = await serve((wire, stream) => wire.rst(stream, CODE.REFUSED_STREAM));
    const error = await failure(getJson(server.kc, '/api', H2));
    expect(error.reason).toBe('NetworkError');
    expect(error.message).toMatch(/REFUSED_STREAM/);
    expect(server.streams).toEqual(['0:1', '1:1', '2:1']);
  });

  it('refused at the connection cap: the error says the stream was refused, not that every connection is full', async () => {
    const server = await serve((wire, stream) => wire.rst(stream, CODE.REFUSED_STREAM));
    const error = await failure(getJson(server.kc, '/api', { ...H2, http2: { maxConnections: 1 } }));
    expect([error.reason, error.message]).toEqual([
      'ProtocolError',
      'list /api: the API server refused the HTTP/2 stream (REFUSED_STREAM) on 1 connection, and no other may be opened (1 open, the most http2.maxConnections allows)',
    ]);
    expect([server.streams, server.connections]).toEqual([['0:1'], 1]);
  });
});

describe('HTTP/2 protocol errors before the response headers', () => {
  const cases: {
    readonly name: string;
    readonly act: (wire: Http2Wire, stream: number) => void;
    readonly reason: ErrorReason;
    readonly message: RegExp;
  }[] = [
    {
      name: 'RST_STREAM PROTOCOL_ERROR',
      act: (wire, stream) => wire.rst(stream, CODE.PROTOCOL_ERROR),
      reason: 'ProtocolError',
      message: /^list \/api: the API server reset the HTTP\/2 stream with PROTOCOL_ERROR \(error code 1\)$/,
    },
    {
      name: 'GOAWAY PROTOCOL_ERROR',
      act: (wire) => wire.goaway(0, CODE.PROTOCOL_ERROR),
      reason: 'ProtocolError',
      message: /^list \/api: the API server closed the HTTP\/2 connection with GOAWAY PROTOCOL_ERROR \(error code 1\)$/,
    },
    {
      name: 'GOAWAY ENHANCE_YOUR_CALM, then the connection closed',
      act: (wire) => {
        wire.goaway(0, CODE.ENHANCE_YOUR_CALM);
        wire.end();
      },
      reason: 'ProtocolError',
      message: /GOAWAY ENHANCE_YOUR_CALM \(error code 11\)$/,
    },
    {
      name: 'FRAME_SIZE_ERROR: a DATA frame over the 16 KiB frame size',
      act: (wire, stream) => wire.raw(FRAME.DATA, 0, stream, Buffer.alloc(20_000, 0x20)),
      reason: 'ProtocolError',
      message: /the API server broke the HTTP\/2 protocol \(nghttp2: .*\); the connection was closed$/,
    },
    {
      name: 'COMPRESSION_ERROR: a header block that does not decode (HPACK index out of range)',
      act: (wire, stream) => wire.raw(FRAME.HEADERS, 0x4, stream, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])),
      reason: 'ProtocolError',
      message: /the API server broke the HTTP\/2 protocol/,
    },
    {
      name: 'PROTOCOL_ERROR: DATA on stream 0',
      act: (wire) => wire.raw(FRAME.DATA, 0, 0, Buffer.from('x')),
      reason: 'ProtocolError',
      message: /the API server broke the HTTP\/2 protocol/,
    },
    {
      name: 'RST_STREAM INTERNAL_ERROR (a reset, not a protocol error: still a NetworkError, in words)',
      act: (wire, stream) => wire.rst(stream, CODE.INTERNAL_ERROR),
      reason: 'NetworkError',
      message: /^list \/api: the API server reset the HTTP\/2 stream with INTERNAL_ERROR \(error code 2\)$/,
    },
    {
      // Node resets such a stream itself (maxHeaderListPairs, 128 by default), with the code a server would use:
      // the words must not blame the server alone (audit22).
      name: "response headers over Node's limits (300 header fields): reset by Node, said as maybe Node's",
      act: (wire, stream) => wire.raw(FRAME.HEADERS, 0x4, stream, manyHeaders(300)),
      reason: 'NetworkError',
      message:
        /^list \/api: the HTTP\/2 stream was reset with ENHANCE_YOUR_CALM \(error code 11\), by the API server or by Node for response headers over its limits$/,
    },
  ];
  it.each(cases)('$name', async ({ act, reason, message }) => {
    const server = await serve((wire, stream) => act(wire, stream));
    const error = await failure(getJson(server.kc, '/api', H2));
    expect(error.reason).toBe(reason);
    expect(error.phase).toBe('list');
    expect(error.message).toMatch(message);
  });

  it('the CLI says it is an HTTP/2 failure from the server, not that the server cannot be reached', async () => {
    const server = await serve((wire) => wire.goaway(0, CODE.ENHANCE_YOUR_CALM));
    const line = explain(await failure(getJson(server.kc, '/api', H2)), 'https://k8s.example.com:6443');
    expect(line).toMatch(/^HTTP\/2 failure from the API server at https:\/\/k8s\.example\.com:6443 .*GOAWAY ENHANCE_YOUR_CALM/);
    expect(line).not.toMatch(/cannot reach/);
  });
});

describe('HTTP/2 protocol errors in the middle of a body', () => {
  /** The headers and a first piece of the body now; the GOAWAY once the client had time to read them. */
  const thenGoaway = (first: string, code: number) => (wire: Http2Wire, stream: number) => {
    wire.headers(stream);
    wire.data(stream, first);
    setTimeout(() => {
      wire.goaway(stream, code);
      wire.end();
    }, 20);
  };

  it('a watch ended by GOAWAY ENHANCE_YOUR_CALM: ProtocolError naming it (not "the connection closed mid-stream")', async () => {
    const event = { type: 'ADDED', object: { metadata: { name: 'a', namespace: 'default', resourceVersion: '11' } } };
    const server = await serve(thenGoaway(`${JSON.stringify(event)}\n`, CODE.ENHANCE_YOUR_CALM));
    const error = await failure(httpListWatch(server.kc, target, H2).watch({ resourceVersion: '10' }));
    expect(error.reason).toBe('ProtocolError');
    expect(error.phase).toBe('watch');
    expect(error.message).toMatch(/^watch \/api\/v1\/namespaces\/default\/configmaps: .*GOAWAY ENHANCE_YOUR_CALM \(error code 11\)$/);
  });

  it('a list page cut by GOAWAY INTERNAL_ERROR: ProtocolError naming it', async () => {
    const server = await serve(thenGoaway(LIST_BODY_HEAD, CODE.INTERNAL_ERROR));
    const error = await failure(httpListWatch(server.kc, target, H2).list({}));
    expect(error.reason).toBe('ProtocolError');
    expect(error.phase).toBe('list');
    expect(error.message).toMatch(/GOAWAY INTERNAL_ERROR \(error code 2\)$/);
  });
  /** The headers and a first piece of the body now; RST_STREAM NO_ERROR (no END_STREAM) once the client had time to read them. */
  const thenReset = (first: string) => (wire: Http2Wire, stream: number) => {
    wire.headers(stream);
    wire.data(stream, first);
    setTimeout(() => wire.rst(stream, CODE.NO_ERROR), 20);
  };
  const RESET = /the API server reset the HTTP\/2 stream with NO_ERROR \(error code 0\) before the end of the response$/;

  it('a list page cut by RST_STREAM NO_ERROR: a NetworkError naming it (as Go reads it), not a clean end that fails to parse', async () => {
    const server = await serve(thenReset(LIST_BODY_HEAD));
    const error = await failure(httpListWatch(server.kc, target, H2).list({}));
    expect([error.reason, error.phase]).toEqual(['NetworkError', 'list']);
    expect(error.message).toMatch(RESET);
  });

  it('END_STREAM on the response HEADERS (an empty body) is a clean end, not a reset', async () => {
    // HEADERS with END_HEADERS | END_STREAM: Node ends the body before the response is handed over.
    const server = await serve((wire, stream) => wire.raw(FRAME.HEADERS, 0x4 | 0x1, stream, OK_JSON_HEADERS));
    const frames: unknown[] = [];
    await expect(
      lastValueFrom(
        httpListWatch(server.kc, target, H2)
          .watch({ resourceVersion: '10' })
          .pipe(tap((f) => frames.push(f))),
        { defaultValue: 'a clean end' },
      ),
    ).resolves.toBe('a clean end');
    expect(frames).toEqual([]);
  });

  it('a watch cut by RST_STREAM NO_ERROR after a whole event: the event, then a NetworkError naming the reset', async () => {
    const event = { type: 'ADDED', object: { metadata: { name: 'a', namespace: 'default', resourceVersion: '11' } } };
    const server = await serve(thenReset(`${JSON.stringify(event)}\n`));
    const frames: unknown[] = [];
    const error = await failure(
      httpListWatch(server.kc, target, H2)
        .watch({ resourceVersion: '10' })
        .pipe(tap((f) => frames.push(f))),
    );
    expect(frames).toMatchObject([event]);
    expect([error.reason, error.phase]).toEqual(['NetworkError', 'watch']);
    expect(error.message).toMatch(RESET);
  });
});

/** A HEADERS block (HPACK): `:status: 200`, then `count` literal fields `x-n: v` (not indexed, new names). */
function manyHeaders(count: number): Buffer {
  const parts = [Buffer.from([0x88])];
  for (let n = 0; n < count; n++) {
    const name = Buffer.from(`x-${n}`);
    parts.push(Buffer.from([0x00, name.length]), name, Buffer.from([1]), Buffer.from('v'));
  }
  return Buffer.concat(parts);
}
