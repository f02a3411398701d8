/**
 * A hostile HTTP/2 server for the hostile-server suite: 127.0.0.1, port 0, h2c with prior knowledge (the client
 * uses `protocol: 'h2'` over `http:`), written frame by frame on a raw TCP socket, so that it can send what no
 * well-behaved HTTP/2 library would: oversized frames, header blocks that do not decode, DATA on stream 0,
 * RST_STREAM and GOAWAY with any error code. It sends its SETTINGS, acknowledges the client's and answers each
 * request (a HEADERS frame) with what the test's `onStream` does, told which connection (0, 1, …) it came on.
 */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/** HTTP/2 frame types and error codes used here (RFC 9113). */
export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7 } as const;
export const CODE = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  COMPRESSION_ERROR: 9,
  ENHANCE_YOUR_CALM: 11,
} as const;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

const u32 = (...values: number[]) => {
  const out = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => out.writeUInt32BE(v, 4 * i));
  return out;
};

/** `:status 200` (static table entry 8) and `content-type: application/json` (literal, name from entry 31), HPACK-encoded. */
export const OK_JSON_HEADERS = Buffer.concat([Buffer.from([0x88, 0x0f, 0x10, 16]), Buffer.from('application/json')]);

/** What a test may send on one connection. */
export interface Http2Wire {
  /** Response headers (200, JSON) for `stream`. */
  headers(stream: number): void;
  /** A DATA frame (`end`: END_STREAM). */
  data(stream: number, body: string | Buffer, end?: boolean): void;
  /** A whole 200 JSON response. */
  json(stream: number, body: unknown): void;
  rst(stream: number, code: number): void;
  goaway(lastStream: number, code: number): void;
  /** Any frame, as is. */
  raw(type: number, flags: number, stream: number, payload?: Buffer): void;
  /** Closes the TCP connection. */
  end(): void;
}

export interface HostileHttp2Server {
  readonly kc: KubeConfig;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Requests received, as `connection:stream` (`0:1`, `0:3`, `1:1`, …). */
  readonly streams: readonly string[];
  close(): Promise<void>;
}

/** Starts the server; `onStream(wire, stream, connection)` answers each request. */
export async function hostileHttp2Server(
  onStream: (wire: Http2Wire, stream: number, connection: number) => void,
): Promise<HostileHttp2Server> {
  const sockets = new Set<net.Socket>();
  const streams: string[] = [];
  let connections = 0;
  const server = net.createServer((socket) => {
    const connection = connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const send = (bytes: Buffer) => void (socket.destroyed || socket.write(bytes));
    const wire: Http2Wire = {
      headers: (stream) => send(frame(FRAME.HEADERS, END_HEADERS, stream, OK_JSON_HEADERS)),
      data: (stream, body, end = false) => send(frame(FRAME.DATA, end ? END_STREAM : 0, stream, Buffer.from(body))),
      json: (stream, body) => {
        wire.headers(stream);
        wire.data(stream, JSON.stringify(body), true);
      },
      rst: (stream, code) => send(frame(FRAME.RST_STREAM, 0, stream, u32(code))),
      goaway: (lastStream, code) => send(frame(FRAME.GOAWAY, 0, 0, u32(lastStream, code))),
      raw: (type, flags, stream, payload) => send(frame(type, flags, stream, payload)),
      end: () => socket.end(),
    };
    send(frame(FRAME.SETTINGS, 0, 0));
    let buffered = Buffer.alloc(0);
    let prefaceSeen = false;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!prefaceSeen) {
        if (buffered.length < 24) return;
        buffered = buffered.subarray(24); // PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n
        prefaceSeen = true;
      }
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) return;
        const [type, flags, stream] = [buffered[3]!, buffered[4]!, buffered.readUInt32BE(5) & 0x7fffffff];
        buffered = buffered.subarray(9 + length);
        if (type === FRAME.SETTINGS && !(flags & ACK)) send(frame(FRAME.SETTINGS, ACK, 0));
        if (type === FRAME.HEADERS) {
          streams.push(`${connection}:${stream}`);
          onStream(wire, stream, connection);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hostile-h2', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'hostile-token' }],
    contexts: [{ name: 'hostile-h2', cluster: 'hostile-h2', user: 'u' }],
    currentContext: 'hostile-h2',
  });
  return {
    kc,
    get connections() {
      return connections;
    },
    streams,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
