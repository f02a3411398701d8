/**
 * A hostile API server for the hostile-server suite: 127.0.0.1, port 0, plain
 * HTTP. Each request is sorted into a kind (list, continue page, watch,
 * discovery, other) and answered by the behaviour the test set for that kind:
 * a well-behaved one ({@link behave}) or a pathological one (endless, huge,
 * slow-drip, garbage, wrong content type, truncated). A test switches a kind
 * back to good behaviour to see the client recover. Bytes written are counted
 * per kind, so a test can tell how much of a pathological answer was read
 * before the client gave up. Other suites (webhook sinks, continue chains) can
 * reuse it: `server.on('other', …)` takes any request.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { KubeConfig } from '@kubernetes/client-node';

export type RequestKind = 'list' | 'continue' | 'watch' | 'discovery' | 'other';

/** What the server knows of a request when it answers it. */
export interface HostileRequest {
  readonly kind: RequestKind;
  readonly url: URL;
  readonly request: http.IncomingMessage;
  /** Counts what the behaviour writes (with backpressure: see {@link writeAll}). */
  write(chunk: Buffer | string): Promise<boolean>;
}

export type Behaviour = (request: HostileRequest, response: http.ServerResponse) => void | Promise<void>;

/** Sorts a request: discovery documents, list pages (first or continued), watches, the rest. */
export function kindOf(url: URL): RequestKind {
  const path = url.pathname;
  if (path === '/api' || path === '/apis' || /^\/api\/v\d[^/]*$/.test(path) || /^\/apis\/[^/]+\/[^/]+$/.test(path)) return 'discovery';
  if (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true') return 'watch';
  if (/^\/apis?\//.test(path)) return url.searchParams.get('continue') ? 'continue' : 'list';
  return 'other';
}

export interface HostileServer {
  readonly kc: KubeConfig;
  readonly url: string;
  /** Requests received, by kind. */
  readonly received: Record<RequestKind, number>;
  /** Bytes written so far, by kind (response bodies). */
  readonly written: Record<RequestKind, number>;
  /** Answers requests of this kind so from now on (open responses carry on as they were). */
  on(kind: RequestKind, behaviour: Behaviour): void;
  /** Ends every open response and the server. */
  close(): Promise<void>;
}

export async function hostileServer(behaviours: Partial<Record<RequestKind, Behaviour>> = {}): Promise<HostileServer> {
  const current: Record<RequestKind, Behaviour> = {
    list: behaviours.list ?? behave.list([]),
    continue: behaviours.continue ?? behave.list([]),
    watch: behaviours.watch ?? behave.watch(),
    discovery: behaviours.discovery ?? behave.discovery(),
    other: behaviours.other ?? status(404, 'NotFound', 'not found'),
  };
  const received: Record<RequestKind, number> = { list: 0, continue: 0, watch: 0, discovery: 0, other: 0 };
  const written: Record<RequestKind, number> = { list: 0, continue: 0, watch: 0, discovery: 0, other: 0 };
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const kind = kindOf(url);
    received[kind]++;
    open.add(response);
    response.on('close', () => open.delete(response));
    response.on('error', () => undefined);
    const write = (chunk: Buffer | string): Promise<boolean> => {
      if (response.destroyed || response.writableEnded) return Promise.resolve(false);
      written[kind] += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      if (response.write(chunk)) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (ok: boolean) => () => {
          response.off('drain', drained);
          response.off('close', closed);
          resolve(ok);
        };
        const drained = done(true);
        const closed = done(false);
        response.once('drain', drained);
        response.once('close', closed);
      });
    };
    Promise.resolve(current[kind]({ kind, url, request, write }, response)).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hostile', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'hostile-token' }],
    contexts: [{ name: 'hostile', cluster: 'hostile', user: 'u' }],
    currentContext: 'hostile',
  });
  return {
    kc,
    url,
    received,
    written,
    on: (kind, behaviour) => void (current[kind] = behaviour),
    async close() {
      for (const response of open) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------
// Well-behaved answers

/** A ConfigMap as a list item or watch object. */
export function configMap(name: string, resourceVersion: string): Record<string, unknown> {
  return { metadata: { name, namespace: 'default', resourceVersion, uid: `uid-${name}` }, data: { k: 'v' } };
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(`${JSON.stringify(body)}\n`);
}

export const behave = {
  /** One page with these items at resourceVersion 10. */
  list:
    (items: readonly unknown[], resourceVersion = '10'): Behaviour =>
    (_request, response) =>
      sendJson(response, 200, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion }, items }),
  /** A watch that sends these events, then stays open (the client ends it). */
  watch:
    (events: readonly { type: string; object: unknown }[] = []): Behaviour =>
    (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.flushHeaders();
      for (const event of events) response.write(`${JSON.stringify(event)}\n`);
    },
  /** A tiny discovery: the core group with configmaps, no named group. */
  discovery: (): Behaviour => (request, response) => {
    const path = request.url.pathname;
    if (path === '/api') return sendJson(response, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (path === '/apis') return sendJson(response, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
    if (path === '/api/v1') {
      const configmaps = {
        name: 'configmaps',
        singularName: '',
        namespaced: true,
        kind: 'ConfigMap',
        verbs: ['list', 'watch'],
        shortNames: ['cm'],
      };
      return sendJson(response, 200, { kind: 'APIResourceList', groupVersion: 'v1', resources: [configmaps] });
    }
    return sendJson(response, 404, {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      message: 'not found',
    });
  },
};

/** An error Status with this code. */
export function status(code: number, reason: string, message: string): Behaviour {
  return (_request, response) =>
    sendJson(response, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

// ---------------------------------------------------------------------------
// Pathological answers

/** Writes `chunk` again and again, respecting backpressure, until the client goes away (or `limit` bytes). */
async function writeAll(request: HostileRequest, chunk: Buffer, limit = Infinity): Promise<void> {
  let sent = 0;
  while (sent < limit && (await request.write(chunk))) sent += chunk.length;
}

/**
 * A body that never ends: `head`, then `chunk` forever (default 64 KiB of spaces,
 * valid inside JSON, so only a byte limit can stop it). `limit` stops it after that many bytes.
 */
export function endless(code: number, options: { head?: string; chunk?: Buffer; contentType?: string; limit?: number } = {}): Behaviour {
  const chunk = options.chunk ?? Buffer.alloc(64 * 1024, 0x20);
  return async (request, response) => {
    response.writeHead(code, { 'Content-Type': options.contentType ?? 'application/json' });
    if (options.head) await request.write(options.head);
    await writeAll(request, chunk, options.limit);
    response.end();
  };
}

/** A body that declares `bytes` in Content-Length (and sends them, if the client reads on). */
export function huge(code: number, bytes: number): Behaviour {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  return async (request, response) => {
    response.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': String(bytes) });
    let sent = 0;
    while (sent < bytes) {
      const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
      if (!(await request.write(piece))) return;
      sent += piece.length;
    }
    response.end();
  };
}

/** `chunk` every `everyMs`, forever (after `head`): a slow drip that never ends. */
export function drip(code: number, options: { head?: string; chunk?: Buffer; everyMs?: number } = {}): Behaviour {
  const chunk = options.chunk ?? Buffer.alloc(16 * 1024, 0x20);
  return (request, response) => {
    response.writeHead(code, { 'Content-Type': 'application/json' });
    if (options.head) void request.write(options.head);
    const timer = setInterval(() => void request.write(chunk), options.everyMs ?? 5);
    response.on('close', () => clearInterval(timer));
  };
}

/** Bytes that are not JSON (a fixed pseudo-random sequence, no newline), then the end. */
export function garbage(code: number, bytes = 4096): Behaviour {
  const body = Buffer.alloc(bytes);
  let x = 12345;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    body[i] = 0x80 + (x % 0x7f); // never a newline, never valid UTF-8 JSON
  }
  return (_request, response) => {
    response.writeHead(code, { 'Content-Type': 'application/json' });
    response.end(body);
  };
}

/** An HTML page where JSON was asked for (a proxy's login or error page). */
export function wrongContentType(code: number): Behaviour {
  return (_request, response) => {
    response.writeHead(code, { 'Content-Type': 'text/html' });
    response.end('<html><body><h1>Proxy error</h1></body></html>\n');
  };
}

/** Declares `declared` bytes, sends the first part of `body`, then drops the connection. */
export function truncated(code: number, body: string, declared = Buffer.byteLength(body) * 2): Behaviour {
  return (_request, response) => {
    response.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': String(declared) });
    response.write(body.slice(0, Math.floor(body.length / 2)), () => response.destroy());
  };
}

// ---------------------------------------------------------------------------
// Compressed answers (Content-Encoding: gzip)

let bombMember: Buffer | undefined;
/** One gzip member of 64 MiB of spaces: about 64 KiB on the wire (deflate's ratio is at most about 1000:1). */
function bomb(): Buffer {
  return (bombMember ??= gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 }));
}

/**
 * A gzip bomb that never ends: `head` as one gzip member, then member after member of 64 MiB of spaces
 * (about 64 KiB each on the wire), until the client goes away: every wire MiB inflates to about 1 GiB.
 */
export function gzipBomb(code: number, head = ''): Behaviour {
  return async (request, response) => {
    response.writeHead(code, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    if (head && !(await request.write(gzipSync(head)))) return;
    await writeAll(request, bomb());
    response.end();
  };
}

/**
 * `body` gzipped, whole (`as: 'whole'`), cut in the middle of the gzip stream though the HTTP response ends
 * cleanly (`'cut'`), or with its deflate data overwritten by garbage (`'corrupt'`); for a watch, `open` keeps
 * the response open afterwards.
 */
export function gzipped(code: number, body: string, as: 'whole' | 'cut' | 'corrupt' = 'whole', open = false): Behaviour {
  const whole = gzipSync(body);
  let bytes = whole;
  if (as === 'cut') bytes = whole.subarray(0, Math.floor(whole.length / 2));
  if (as === 'corrupt') {
    bytes = Buffer.from(whole);
    for (let i = 10; i < bytes.length - 8; i++) bytes[i] = 0xff;
  }
  return async (request, response) => {
    response.writeHead(code, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    await request.write(bytes);
    if (!open) response.end();
  };
}

/** A body in a Content-Encoding the client did not ask for (`br`: bytes that are not JSON). */
export function encodedAs(code: number, encoding: string): Behaviour {
  return (_request, response) => {
    response.writeHead(code, { 'Content-Type': 'application/json', 'Content-Encoding': encoding });
    response.end(Buffer.from([0x1b, 0x2f, 0x00, 0xf8, 0x25, 0x82, 0x82, 0x3f]));
  };
}
