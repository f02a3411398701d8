/**
 * A kept-alive HTTP/1.1 connection the server closed while it sat idle (its keep-alive timeout raced our reuse, as
 * on a loaded machine): the GET is sent once more on a new connection, as Go's transport does, instead of failing
 * with "socket hang up". A connection reset on a fresh connection still fails at once.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';
import { getJson } from '../../src/1-transport/httpTransport.ts';
import type { InformerError } from '../../src/index.ts';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** A server that answers the first request of each connection and drops the connection at any later one. */
async function oneRequestPerConnection(options: { dropFirst?: boolean } = {}) {
  const served = new WeakSet<Socket>();
  const log: string[] = [];
  let connections = 0;
  const server = http.createServer((request, response) => {
    const socket = request.socket;
    if (served.has(socket) || options.dropFirst) {
      log.push(`dropped on connection ${connections}`);
      return void socket.destroy();
    }
    served.add(socket);
    log.push(`answered on connection ${connections}`);
    response.writeHead(200, { 'Content-Type': 'application/json', Connection: 'keep-alive' });
    response.end(JSON.stringify({ kind: 'APIVersions', versions: ['v1'] }));
  });
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return { kc, log, connections: () => connections };
}

describe('a kept-alive connection closed by the server while idle', () => {
  it('the GET that reused it goes once more on a new connection, and succeeds', async () => {
    const s = await oneRequestPerConnection();
    expect(await firstValueFrom(getJson(s.kc, '/api'))).toEqual({ kind: 'APIVersions', versions: ['v1'] });
    expect(await firstValueFrom(getJson(s.kc, '/api'))).toEqual({ kind: 'APIVersions', versions: ['v1'] });
    expect(s.log).toEqual(['answered on connection 1', 'dropped on connection 1', 'answered on connection 2']);
  });

  it('a fresh connection dropped is a NetworkError at once (nothing sent again)', async () => {
    const s = await oneRequestPerConnection({ dropFirst: true });
    const error = await lastValueFrom(getJson(s.kc, '/api')).then(
      () => undefined,
      (e: InformerError) => e,
    );
    expect(error?.reason).toBe('NetworkError');
    expect(error?.message).toMatch(/ECONNRESET/);
    expect(s.connections()).toBe(1);
  });
});
