/**
 * A connection that fails before any byte is exchanged: the message names the request and Node's code once
 * (`list /api/v1/configmaps: connect ECONNREFUSED 127.0.0.1:…`, not `ECONNREFUSED connect ECONNREFUSED …`).
 */
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import * as net from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, type InformerError } from '../../src/index.ts';
import { networkDetail } from '../../src/1-transport/http/request.ts';
import { httpListWatch } from '../../src/pipeline.ts';

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('network errors', () => {
  it('a refused connection: the code said once', async () => {
    const port = await closedPort();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}` }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const error = await firstValueFrom(httpListWatch(kc, { resource: ConfigMap }).list({})).then(
      () => undefined,
      (e: unknown) => e as InformerError,
    );
    expect(error?.reason).toBe('NetworkError');
    expect(error?.message).toBe(`list /api/v1/configmaps: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("a code Node's message does not name is put in front of it", () => {
    const reset = Object.assign(new Error('Client network socket disconnected before secure TLS connection was established'), {
      code: 'ECONNRESET',
    });
    expect(networkDetail(reset)).toBe('ECONNRESET Client network socket disconnected before secure TLS connection was established');
    expect(networkDetail(new Error('socket hang up'))).toBe('socket hang up');
  });
});
