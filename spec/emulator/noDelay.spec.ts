/**
 * The HTTP/2 front turns Nagle's algorithm off on every TCP connection it accepts, as Go's net does for a real
 * kube-apiserver. Node's HTTP/2 session would do so itself, but the socket it is given is the front's gate (a
 * stream, not the TCP socket): without it, a watch event written after another waits in the send buffer for the
 * client's delayed ACK, or until the client writes (its PING, 5 s later in the restart test's virtual time).
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import { afterEach, expect, it, vi } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await api?.close();
  api = undefined;
});

it('the HTTP/2 front sets TCP_NODELAY on each accepted connection', async () => {
  api = await startApiServer({ http2: true });
  const port = api.port;
  const noDelay: net.Socket[] = [];
  const original = net.Socket.prototype.setNoDelay;
  vi.spyOn(net.Socket.prototype, 'setNoDelay').mockImplementation(function (this: net.Socket, enable?: boolean) {
    if (enable !== false && this.localPort === port) noDelay.push(this);
    return original.call(this, enable);
  });
  const client = tls.connect({ host: '127.0.0.1', port, ca: api.caPem, ALPNProtocols: ['h2'], servername: 'localhost' });
  await new Promise<void>((resolve, reject) => client.once('secureConnect', resolve).once('error', reject));
  expect(noDelay.map((socket) => socket.remotePort)).toEqual([client.localPort]);
  client.destroy();
});
