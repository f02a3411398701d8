/**
 * `down()` / `up()`: a control-plane restart. While down the port refuses connections and every open one
 * (watches included) is dropped; the objects and their history survive; `up()` serves again on the same port.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call, openWatch } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => 'answered',
    (error: NodeJS.ErrnoException) => error.code,
  );

describe.each([
  ['HTTP/1.1', {}],
  ['HTTP/2', { http2: true }],
] as const)('down() and up() over %s', (_, options) => {
  it('refuses connections while down, drops open watches, keeps the objects and history, and serves again on the same port', async () => {
    api = await startApiServer({ namespaces: ['ns'], ...options });
    const ca = api.caPem === undefined ? {} : { ca: api.caPem };
    api.create('configmaps', { metadata: { name: 'a', namespace: 'ns' } });
    const rv = api.resourceVersion;
    const watch = openWatch(api, `/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=${rv}`);
    expect((await watch.ready).status).toBe(200);
    const { port, url } = api;

    await api.down();
    expect(api.isDown).toBe(true);
    await watch.done; // dropped
    expect(await refusal(call(url, 'GET', '/version', undefined, {}, ca))).toBe('ECONNREFUSED');
    await api.down(); // idempotent
    api.create('configmaps', { metadata: { name: 'b', namespace: 'ns' } });

    await api.up();
    expect(api.isDown).toBe(false);
    expect(api.port).toBe(port);
    const list = await call(url, 'GET', '/api/v1/namespaces/ns/configmaps', undefined, {}, ca);
    expect(list.status).toBe(200);
    expect(list.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['a', 'b']);
    // The history survived: a watch from before the outage replays what was written during it.
    const again = openWatch(api, `/api/v1/namespaces/ns/configmaps?watch=1&resourceVersion=${rv}`);
    const [line] = await again.waitLines(1);
    expect(line?.event).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'b' } } });
    again.abort();
    await api.up(); // idempotent
  });
});
