/**
 * A request whose headers Node will not send, and a server's 100 KB continue token (edges99). Node refuses an HTTP/2
 * header block over `maxSendHeaderBlockLength` (64 KiB by default) itself ('frameError' on the stream, then
 * REFUSED_STREAM, the code a server's refusal has): the request was sent again on two new connections and failed with
 * "the server refused the HTTP/2 stream", a `NetworkError` from a server that never saw it. Now it is reported as
 * Node's own (`ProtocolError`), once, on one connection. And an informer never sends back a continue token over
 * MAX_CONTINUE_TOKEN_CHARS, over HTTP/2 or HTTP/1.1 (the prefetch of the next page neither). Raw servers (as
 * http2.spec.ts's refused streams): the emulator hands out only tokens of the names it accepts.
 */
import * as http2 from 'node:http2';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, informerFactory, type InformerError } from '../../src/index.ts';
import { getJson, httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { http2Connections } from '../../src/1-transport/http2/pool.ts';
import { TEST_TLS_CERT, TEST_TLS_KEY } from 'rx-informer-emulator';
import { waitFor } from '../resilience/harness/live.ts';

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** A TLS server speaking HTTP/2 and HTTP/1.1 (ALPN), with the KubeConfig to reach it and what it saw. */
async function server(answer: (path: string, res: http2.Http2ServerResponse) => void) {
  const seen = { sessions: 0, paths: [] as string[] };
  const s = http2.createSecureServer({ cert: TEST_TLS_CERT, key: TEST_TLS_KEY, allowHTTP1: true });
  s.on('session', () => seen.sessions++);
  s.on('request', (req, res) => {
    seen.paths.push(req.url);
    answer(req.url, res);
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const open = new Set<http2.Http2ServerResponse>();
  s.on('request', (_req, res) => open.add(res));
  stops.push(() => {
    for (const res of open) res.stream?.close();
    s.close();
  });
  const kc = new KubeConfig();
  const port = (s.address() as { port: number }).port;
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(TEST_TLS_CERT).toString('base64') }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  stops.push(() => {
    for (const connection of http2Connections(kc)) connection.session?.destroy();
  });
  return { kc, seen };
}

describe('HTTP/2 headers Node will not send', () => {
  it('a 100 KB path: a ProtocolError in our words (not "refused by the API server"), sent once, on one connection', async () => {
    const { kc, seen } = await server((_path, res) => res.end('{}'));
    const error = await firstValueFrom(getJson(kc, `/api?x=${'a'.repeat(100_000)}`, { protocol: 'h2' })).then(
      () => undefined,
      (e: InformerError) => e,
    );
    expect(error?.reason).toBe('ProtocolError');
    expect(error?.message).toMatch(
      /Node could not send the request's HTTP\/2 HEADERS frame \(error code 6; 100,\d{3} bytes of request headers/,
    );
    expect(error?.message).toContain('the API server never saw the request');
    expect(error?.message).not.toContain('refused');
    expect(error?.unreachable).not.toBe(true);
    expect(seen).toEqual({ sessions: 1, paths: [] });
    // The connection goes on serving.
    expect(await firstValueFrom(getJson(kc, '/api', { protocol: 'h2' }))).toEqual({});
    expect(seen.sessions).toBe(1);
  });
});

describe("a server's 100 KB continue token", () => {
  // 20,000 characters: past the bound, within Node's 64 KiB header block: a request with it would reach this server
  // (the prefetch of the next page, asked as soon as the token has come, included).
  it.each([
    ['h2', 100_000],
    ['http1', 100_000],
    ['h2', 20_000],
  ] as const)('%s, %i characters: never sent back; MalformedLine naming its length, then page 1 again', async (protocol, length) => {
    const page = JSON.stringify({
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '5', continue: 'a'.repeat(length) },
      items: [{ metadata: { name: 'a', namespace: 'default', resourceVersion: '5' } }],
    });
    const { kc, seen } = await server((path, res) => {
      if (path.includes('watch=')) return res.writeHead(200, { 'content-type': 'application/json' }); // left open
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(page);
    });
    const informer = informerFactory(kc, { http: { protocol } }).informer(ConfigMap, { namespace: 'default' });
    const errors: InformerError[] = [];
    const subscription = informer.errors$.subscribe((e) => errors.push(e));
    subscription.add(informer.store$.subscribe());
    stops.push(() => subscription.unsubscribe());
    // The first list, its error, and (after the default 800 ms backoff) the first page asked again.
    await waitFor('page 1 asked twice', () => seen.paths.filter((p) => p.startsWith('/api/v1/namespaces/default/configmaps')).length >= 2);
    expect(seen.paths.filter((p) => p.includes('continue='))).toEqual([]);
    expect(errors[0]?.reason).toBe('MalformedLine');
    expect(errors[0]?.message).toContain(
      `the server's continue token is ${length.toLocaleString('en-US')} characters, over the 16,384 sent back to it`,
    );
  });
});

describe('httpListWatch does not send back a server-given value no server makes', () => {
  it('a 2,000-character resourceVersion (a list, a watch) or a 20,000-character continue token: MalformedLine, no request', async () => {
    const { kc, seen } = await server((_path, res) => res.end('{}'));
    const lw = httpListWatch(kc, { resource: ConfigMap, namespace: 'default' }, { protocol: 'h2' });
    const failure = (o: Parameters<typeof firstValueFrom>[0]) =>
      firstValueFrom(o).then(
        () => 'answered',
        (e: InformerError) => `${e.reason} ${e.phase} (${e.request}) ${e.message}`,
      );
    const rv = '9'.repeat(2_000);
    expect(await failure(lw.watch({ resourceVersion: rv }))).toBe(
      "MalformedLine watch (watch /api/v1/namespaces/default/configmaps) the server's resourceVersion is 2,000 characters, over the 1,024 sent back to it; not sent",
    );
    expect(await failure(lw.list({ resourceVersion: rv }))).toMatch(
      /^MalformedLine list \(list \/api\/v1\/namespaces\/default\/configmaps\) .*resourceVersion is 2,000 characters/,
    );
    expect(await failure(lw.list({ limit: 500, continue: 'c'.repeat(20_000) }))).toMatch(
      /^MalformedLine list .*continue token is 20,000 characters, over the 16,384 sent back to it; not sent$/,
    );
    expect(seen.paths).toEqual([]);
  });
});
