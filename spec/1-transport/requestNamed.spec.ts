/**
 * Every failure of a request the transport made names the request (`InformerError.request`): its verb and path,
 * never the query (continue tokens, selectors, resourceVersions). An informer of a custom resource with a wrong
 * plural says which path the server could not find, over real HTTP to the emulator on 127.0.0.1.
 */
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { InformerError } from '../../src/0-model/errors.ts';
import { ConfigMap, customResource } from '../../src/0-model/resources.ts';
import type { HttpTransportOptions } from '../../src/1-transport/http/options.ts';
import { getJson, httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { informer } from '../../src/5-informer/informer.ts';
import { hostileServer, huge, status, type HostileServer } from '../resilience/hostile/server.ts';

let api: ApiServer;
let server: HostileServer;
beforeAll(async () => {
  [api, server] = await Promise.all([startApiServer(), hostileServer()]);
});
afterAll(async () => {
  await Promise.all([api.close(), server.close()]);
});

async function failure(request: Promise<unknown>): Promise<InformerError> {
  const error = await request.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof InformerError)) throw new Error(`expected an InformerError, got ${String(error)}`);
  return error;
}

describe('InformerError.request', () => {
  it("a wrong plural's NotFound names the path the server could not find (errors$)", async () => {
    const Wrong = customResource({ group: 'stable.example.com', version: 'v1', plural: 'myapple', kind: 'MyApple', namespaced: true });
    const wrong = informer(api.kubeConfig, Wrong, { namespace: 'shop' });
    const error = await firstValueFrom(wrong.errors$.pipe(filter((e) => e.reason === 'NotFound')));
    expect(error.request).toBe('list /apis/stable.example.com/v1/namespaces/shop/myapple');
    expect(error.message).toBe('the server could not find the requested resource'); // the message stays the server's
  });

  it('names a list and a watch by verb and path, without the query', async () => {
    server.on('list', status(403, 'Forbidden', 'no'));
    server.on('continue', status(410, 'Expired', 'too old'));
    server.on('watch', status(500, 'InternalError', 'broke'));
    const lw = httpListWatch(server.kc, { resource: ConfigMap, namespace: 'ops', labelSelector: 'secret=token' });
    const list = await failure(firstValueFrom(lw.list({ limit: 5, resourceVersion: '7' })));
    const page = await failure(firstValueFrom(lw.list({ limit: 5, continue: 'c2VjcmV0' })));
    const watch = await failure(firstValueFrom(lw.watch({ resourceVersion: '7' })));
    expect([list.request, page.request, watch.request]).toEqual([
      'list /api/v1/namespaces/ops/configmaps',
      'list /api/v1/namespaces/ops/configmaps',
      'watch /api/v1/namespaces/ops/configmaps',
    ]);
  });

  it('names a document GET, and a response past its limit', async () => {
    server.on('discovery', status(404, 'NotFound', 'gone'));
    expect((await failure(firstValueFrom(getJson(server.kc, '/apis/x.io/v1?timeout=5s')))).request).toBe('GET /apis/x.io/v1');
    server.on('list', huge(200, 64 * 1024));
    const tooLarge = await failure(firstValueFrom(httpListWatch(server.kc, { resource: ConfigMap }, { maxListBytes: 1024 }).list({})));
    expect([tooLarge.reason, tooLarge.request]).toEqual(['ResponseTooLarge', 'list /api/v1/configmaps']);
  });

  it('is kept by inPhase, and a request named first stays', () => {
    const error = new InformerError('NotFound', 'x', { phase: 'list', request: 'list /a' });
    expect(error.inPhase('watch').request).toBe('list /a');
    expect(error.forRequest('watch /b').request).toBe('list /a');
    expect(new InformerError('NotFound', 'x').forRequest('watch /b').request).toBe('watch /b');
  });
});

describe('an error read from an open watch names the watch', () => {
  const paths: [string, HttpTransportOptions][] = [
    ['JSON', {}],
    ['lazy JSON', { lazyDecode: true }],
    ['protobuf', { encoding: 'protobuf', lazyDecode: true }],
  ];
  it.each(paths)('%s: an ERROR event (410 Expired) and a line that cannot be read', async (_, http) => {
    const emulator = await startApiServer({ namespaces: ['shop'] });
    try {
      emulator.create('configmaps', { metadata: { name: 'cm', namespace: 'shop' } });
      emulator.faults.add({ match: { resource: 'configmaps', watch: true }, fault: { type: 'malformedLine' } });
      emulator.faults.add({ match: { resource: 'configmaps', watch: true }, fault: { type: 'expireWatch' } });
      const configMaps = informer(emulator.kubeConfig, ConfigMap, { namespace: 'shop', http });
      const seen = firstValueFrom(configMaps.errors$.pipe(filter((e) => e.reason === 'Expired')));
      const malformed = firstValueFrom(configMaps.errors$.pipe(filter((e) => e.reason === 'MalformedLine')));
      const [expired, unreadable] = await Promise.all([seen, malformed]);
      expect([expired.status, expired.phase, expired.request]).toEqual([410, 'watch', 'watch /api/v1/namespaces/shop/configmaps']);
      expect([unreadable.phase, unreadable.request]).toEqual(['watch', 'watch /api/v1/namespaces/shop/configmaps']);
      const protobuf = emulator.requests.some((r) => r.watch && (r.accept ?? '').includes('protobuf'));
      expect(protobuf).toBe(http.encoding === 'protobuf');
    } finally {
      await emulator.close();
    }
  });
});

describe('InformerError.forRequest', () => {
  it('keeps the stack of where the error was made', () => {
    const error = new InformerError('Timeout', 'stalled');
    expect(error.forRequest('list /a').stack).toBe(error.stack);
  });
});
