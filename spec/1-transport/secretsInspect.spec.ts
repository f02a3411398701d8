/**
 * What `util.inspect`, `JSON.stringify` and `String` show of a ListWatch, an informer and the errors of a request
 * whose kubeconfig holds a token, a password in the server's user info, or a token in the server's query (audit43):
 * none of them. A query in the server is not sent, and the request a failure names is the collection's path.
 */
import { inspect } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { ConfigMap } from '../../src/0-model/resources.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { informer } from '../../src/5-informer/informer.ts';

const TOKEN = 'TOKENsecretsInspect0123456789';
const PASSWORD = 'PASSsecretsInspect';
const QUERY = 'QSsecretsInspect0123';

function kc(server: string): KubeConfig {
  const k = new KubeConfig();
  k.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: server.startsWith('http:') }],
    users: [{ name: 'u', token: TOKEN }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return k;
}

/** The list's failure (port 1 refuses, `.invalid` never resolves), as `inspect`, JSON and `String` show it. */
async function shownFailure(server: string, http2: boolean): Promise<{ error: InformerError; shown: string }> {
  const lw = httpListWatch(kc(server), { resource: ConfigMap }, { protocol: http2 ? 'h2' : 'http1' });
  const error = await firstValueFrom(lw.list({})).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof InformerError)) throw new Error(`expected an InformerError, got ${String(error)}`);
  return { error, shown: inspect(error, { depth: 10 }) + JSON.stringify(error) + String(error) };
}

describe('secrets in what a ListWatch and its errors show', () => {
  it('httpListWatch and an informer, inspected, show no token', () => {
    const lw = httpListWatch(kc('https://127.0.0.1:1'), { resource: ConfigMap });
    const shown = [inspect(lw, { depth: 10 }), inspect(informer(lw, ConfigMap), { depth: 10 })].join('\n');
    expect(shown).not.toContain(TOKEN);
  });

  for (const server of [
    `https://usr:${PASSWORD}@127.0.0.1:1`,
    `https://usr:${PASSWORD}@no-such-host.invalid`,
    `http://usr:${PASSWORD}@127.0.0.1:1`,
  ])
    for (const http2 of [false, true])
      it(`user info in the server URL (${server}, ${http2 ? 'HTTP/2' : 'HTTP/1.1'}): the error shows no password, no token`, async () => {
        const { shown } = await shownFailure(server, http2);
        expect(shown).not.toContain(PASSWORD);
        expect(shown).not.toContain(TOKEN);
      });

  it("a token in the server URL's query: the error's message and request name the collection's path; no query, no token", async () => {
    const { error, shown } = await shownFailure(`https://127.0.0.1:1/?access_token=${QUERY}`, false);
    expect(error.request).toBe('list /api/v1/configmaps');
    // The message named the URL's path: `list /: connect ECONNREFUSED …`, the path appended after the query.
    expect(error.message).toMatch(/^list \/api\/v1\/configmaps: connect ECONNREFUSED/);
    expect(shown).not.toContain(QUERY);
    expect(shown).not.toContain(TOKEN);
  });
});
