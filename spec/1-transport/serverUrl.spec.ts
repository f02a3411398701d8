/**
 * A kubeconfig's `server` with a path, a query or a fragment: requests are built as client-go's rest client builds
 * them (NewRESTClient: the server's path a prefix, its query and fragment dropped), not by appending the request's
 * path to the server's text, which put it after a query (`https://h/?access_token=…` asked for `/`, audit43). Over
 * real HTTP/1.1 and HTTP/2 to the emulator on 127.0.0.1, what the server was asked for is read from its request log.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { firstValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { ConfigMap } from '../../src/0-model/resources.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { requestUrl } from '../../src/1-transport/paths.ts';

describe('requestUrl', () => {
  it.each([
    ['https://h', '/api/v1/pods?limit=5', 'https://h/api/v1/pods?limit=5'],
    ['https://h/', '/api/v1/pods', 'https://h/api/v1/pods'],
    ['https://h:6443/a/b/', '/api/v1/pods?limit=5', 'https://h:6443/a/b/api/v1/pods?limit=5'],
    ['https://h/?access_token=QS', '/api/v1/pods?limit=5', 'https://h/api/v1/pods?limit=5'],
    ['https://h/a?x=1#frag', '/version', 'https://h/a/version'],
    ['https://h#frag', '/api/v1/namespaces/a%2Fb/pods?watch=true', 'https://h/api/v1/namespaces/a%2Fb/pods?watch=true'],
  ])('%s + %s', (server, path, expected) => {
    expect(requestUrl(server, path).href).toBe(expected);
  });
});

const QUERY = 'QSserverUrl0123456789';

for (const protocol of ['http1', 'h2'] as const)
  describe(`a server URL with a query and a fragment (${protocol})`, () => {
    let api: ApiServer;
    beforeAll(async () => {
      api = await startApiServer(protocol === 'h2' ? { http2: true } : {});
      api.create('configmaps', { metadata: { name: 'one', namespace: 'default' }, data: { a: '1' } });
    });
    afterAll(async () => {
      await api.close();
    });

    it('lists the collection: the path is the request path, the query its own, nothing of the server URL', async () => {
      const kc = new KubeConfig();
      const cluster = api.kubeConfig.getCurrentCluster()!;
      kc.loadFromOptions({
        clusters: [{ ...cluster, server: `${api.url}/?access_token=${QUERY}#frag` }],
        users: [{ name: 'u' }],
        contexts: [{ name: 'x', cluster: cluster.name, user: 'u' }],
        currentContext: 'x',
      });
      const lw = httpListWatch(kc, { resource: ConfigMap }, { protocol });
      const pages = await firstValueFrom(lw.list({ limit: 10 }).pipe(toArray()));
      expect(pages.flatMap((p) => p.items.map((i) => (i as { metadata: { name: string } }).metadata.name))).toEqual(['one']);
      const asked = api.requests.filter((r) => r.method === 'GET');
      expect(asked.map((r) => r.path)).toEqual(['/api/v1/configmaps']);
      expect(asked[0]!.query).toEqual({ limit: '10' });
      expect(JSON.stringify(asked)).not.toContain(QUERY);
    });
  });
