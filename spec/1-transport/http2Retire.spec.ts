/**
 * A pooled HTTP/2 connection retired while it is still opening (the TLS material changed: a rotated CA or client
 * certificate file, an exec plugin's new certificate, while informers reconnect together) is closed by the client once
 * the streams it was opened for end (audit17: `retire()` closed no session, there being none yet, and the idle close
 * skips a closed connection, so it stayed open until the server closed it: 20 of 20 rotations left one open). At the
 * default options: the connection of the new material stays, idle, for its 90 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { http2Connections, reserveStream } from '../../src/1-transport/http2/pool.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { waitReal } from '../support/realIo.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** Opens a stream on `connection` as http2/request.ts's send() does after the connection is ready, and reads it to its end. */
async function oneStream(connection: NonNullable<ReturnType<typeof reserveStream>['connection']>): Promise<void> {
  await connection.ready;
  const stream = connection.session!.request({ ':path': '/version' });
  connection.streamOpened();
  stream.resume();
  await new Promise((resolve) => stream.on('close', resolve));
  connection.streamClosed();
}

describe('an HTTP/2 connection retired while it opens', () => {
  it('is closed when its last stream ends; the new material keeps its own connection', async () => {
    api = await startApiServer({ http2: true });
    const h2 = api.http2!;
    const url = new URL(api.url);
    const owner = {};
    const tls = { ca: api.caPem };
    // A reserves a stream on a new connection; B comes with new material before it has opened: A's is retired.
    const a = reserveStream(owner, 'slot', 'digest-1', url, tls, true, {});
    const b = reserveStream(owner, 'slot', 'digest-2', url, tls, true, {});
    expect(a.connection).toBeDefined();
    expect(b.connection).toBeDefined();
    expect(b.connection).not.toBe(a.connection);
    await oneStream(a.connection!);
    await oneStream(b.connection!);
    expect(a.connection!.session!.closed).toBe(true);
    expect(b.connection!.session!.closed).toBe(false);
    expect(http2Connections(owner)).toEqual([b.connection]);
    await waitReal('the retired connection closed on the server', () => h2.openConnections === 1);
  });
});
