import { afterEach, describe, expect, it, vi } from 'vitest';
import * as http from 'node:http';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call, fixture, openWatch, sleep } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** Handles and timers alive in this process, by type. */
function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

describe('authentication', () => {
  it('requires the bearer token when configured: 401 exactly as 06d, everywhere', async () => {
    api = await startApiServer({ token: 'admintoken' });
    const f = fixture('06d');
    for (const headers of [{}, { Authorization: 'Bearer not-a-valid-token' }, { Authorization: 'Basic YWRtaW46YWRtaW4=' }] as Record<
      string,
      string
    >[]) {
      const r = await call(api, 'GET', f.request.path, undefined, headers);
      expect(r.status).toBe(401);
      expect(r.raw).toBe(`${JSON.stringify(f.response.body)}\n`);
    }
    expect((await call(api, 'GET', '/api')).status).toBe(401);
    expect((await call(api, 'GET', f.request.path, undefined, { Authorization: 'Bearer admintoken' })).status).toBe(200);
    expect(api.kubeConfig.getCurrentUser()?.token).toBe('admintoken');
    expect(api.kubeConfig.getCurrentCluster()?.skipTLSVerify).toBe(true);
  });
});

describe('lifecycle', () => {
  it('close() ends open watches cleanly, refuses new connections and leaves no handle or timer behind', async () => {
    api = await startApiServer({ bookmarkIntervalMs: 5 });
    api.create('configmaps', { metadata: { name: 'a', namespace: 'default' } });
    const watches = [
      openWatch(api, '/api/v1/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=60'),
      openWatch(api, '/api/v1/namespaces?watch=true&resourceVersion=1'),
    ];
    api.faults.add({ match: { resource: 'configmaps', namespace: 'default' }, fault: { type: 'slowWatch', chunkBytes: 8, delayMs: 50 } });
    const slow = openWatch(api, '/api/v1/namespaces/default/configmaps?watch=true');
    // Timers of an hour: a close() that waited for any of them would run into the test's timeout (no stopwatch needed).
    api.faults.add({ match: { resource: 'pods' }, fault: { type: 'delay', ms: 3_600_000 } });
    // a slow watch that timed out but is still trickling its backlog out
    api.create('secrets', { metadata: { name: 's', namespace: 'default' }, stringData: { a: 'b' } });
    api.faults.add({ match: { resource: 'secrets' }, fault: { type: 'slowWatch', chunkBytes: 4, delayMs: 3_600_000 } });
    const draining = openWatch(api, '/api/v1/namespaces/default/secrets?watch=true&timeoutSeconds=0.01');
    const delayed = call(api, 'GET', '/api/v1/pods').catch((e: Error) => e);
    await Promise.all([...watches, slow, draining].map((w) => w.ready));
    // the draining watch's 10 ms timeout ended it (it no longer counts) while its backlog waits for the next chunk
    await vi.waitFor(() => expect(api!.activeWatches).toBe(3), { timeout: 20_000, interval: 5 });
    const pending = expect(api.waitForRequest(() => false, 60_000)).rejects.toThrow(/closed/);
    const url = api.url;
    await api.close();
    await pending;
    const results = await Promise.all([...watches, slow].map((w) => w.done));
    expect(results.map((r) => r.how)).toEqual(['end', 'end', 'end']);
    expect(results[2]!.lines.map((l) => l.event?.type)).toEqual(['ADDED']);
    expect(await delayed).toBeInstanceOf(Error);
    expect((await draining.done).lines).toHaveLength(0);
    await expect(call(url, 'GET', '/api')).rejects.toThrow(/ECONNREFUSED/);
    await api.close(); // idempotent
    api = undefined;
    // Nothing of ours may stay alive: no timer, no server, no socket (polling absorbs the runner's own short-lived timers).
    let after = resources();
    for (let i = 0; i < 30 && (after['Timeout'] || after['TCPServerWrap'] || after['TCPSocketWrap']); i++) {
      await sleep(10);
      after = resources();
    }
    expect({ timers: after['Timeout'] ?? 0, servers: after['TCPServerWrap'] ?? 0, sockets: after['TCPSocketWrap'] ?? 0 }).toEqual({
      timers: 0,
      servers: 0,
      sockets: 0,
    });
  });

  it('closeWatches() ends every watch, cleanly or by dropping the connection', async () => {
    api = await startApiServer();
    const a = openWatch(api, '/api/v1/pods?watch=true');
    await a.ready;
    expect(api.closeWatches()).toBe(1);
    expect((await a.done).how).toBe('end');
    const b = openWatch(api, '/api/v1/pods?watch=true');
    await b.ready;
    expect(api.closeWatches({ clean: false })).toBe(1);
    expect((await b.done).how).toBe('aborted');
    expect(api.activeWatches).toBe(0);
  });

  it('waitForRequest sees past and future requests; nextRequest only future ones; both time out', async () => {
    api = await startApiServer();
    await call(api, 'GET', '/api/v1/pods');
    const past = await api.waitForRequest((r) => r.resource === 'pods');
    expect(past).toMatchObject({ seq: 1, method: 'GET', path: '/api/v1/pods', status: 200, watch: false, resource: 'pods' });
    const next = api.nextRequest((r) => r.resource === 'pods');
    await call(api, 'GET', '/api/v1/pods?limit=5');
    expect(await next).toMatchObject({ seq: 2, query: { limit: '5' } });
    await expect(api.nextRequest(() => true, 30)).rejects.toThrow(/within 30 ms/);
    expect(api.requests).toHaveLength(2);
    api.clearRequests();
    expect(api.requests).toHaveLength(0);
  });
});

describe('keep-alive', () => {
  const keepAliveHeader = (server: ApiServer) =>
    new Promise<string | undefined>((resolve, reject) => {
      const agent = new http.Agent({ keepAlive: true });
      http
        .get(`${server.url}/api`, { agent }, (res) => {
          res.resume();
          res.on('end', () => {
            agent.destroy();
            resolve(String(res.headers['keep-alive']));
          });
        })
        .on('error', reject);
    });

  it("an idle kept-alive connection stays open Node's 5 s by default, keepAliveTimeoutMs when set (said in Keep-Alive)", async () => {
    api = await startApiServer();
    expect(await keepAliveHeader(api)).toBe('timeout=5');
    await api.close();
    api = await startApiServer({ keepAliveTimeoutMs: 60_000 });
    expect(await keepAliveHeader(api)).toBe('timeout=60');
  });
});
