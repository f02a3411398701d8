/**
 * 401, 403 and 404 are reported and retried, never a permanent stop: a CRD
 * installed after the informer started, credentials that are wrong and then
 * rotated, a 403 on lists and on a watch. Credentials that rotate (issue #13):
 * an exec plugin's token revoked by the server, a CA file and a client
 * certificate swapped on disk, over the emulator's TLS mode.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, customResource, type KubeObject } from '../../src/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import {
  startApiServer,
  TEST_TLS_CERT,
  TEST_TLS_CERT_B,
  TEST_TLS_CERT_C,
  TEST_TLS_KEY,
  TEST_TLS_KEY_B,
  TEST_TLS_KEY_C,
  type ApiServer,
} from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from './harness/live.ts';

let api: ApiServer | undefined;
let live: Running<KubeObject> | undefined;
let dir: string | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A fresh temporary directory for files the kubeconfig points at. */
function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-auth-'));
  return dir;
}

/** A kubeconfig for a TLS emulator whose CA, user and files the test chooses. */
function tlsKubeConfig(server: string, cluster: Record<string, unknown>, user: Record<string, unknown>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'emulator', server, ...cluster }],
    users: [{ name: 'someone', ...user }],
    contexts: [{ name: 'emulator', cluster: 'emulator', user: 'someone' }],
    currentContext: 'emulator',
  });
  return kc;
}

const backoff = { initialMs: 10, maxMs: 40 };

describe('404: a custom resource whose CRD is not installed yet', () => {
  it('is reported as NotFound and retried until the CRD is registered, then the informer syncs', async () => {
    const Apples = customResource({ group: 'stable.example.com', version: 'v1', plural: 'apples', kind: 'Apple', namespaced: true });
    api = await startApiServer();
    live = run(api, Apples, { backoff });
    await waitFor('three 404s', () => live!.errors.length >= 3);
    expect(live.synced()).toBe(false);
    expect(new Set(live.errors.map((e) => `${e.reason} ${e.status} ${e.phase}`))).toEqual(new Set(['NotFound 404 list']));

    api.registerCustomResource({ group: 'stable.example.com', version: 'v1', plural: 'apples', kind: 'Apple' });
    api.create('apples.stable.example.com', {
      apiVersion: 'stable.example.com/v1',
      kind: 'Apple',
      metadata: { name: 'red', namespace: 'default' },
    });
    await waitFor('the informer to sync', live.synced, 2000);
    await converged(api, live, 'apples.stable.example.com');
    expect(live.store()?.keys()).toEqual(['default/red']);
  });
});

describe('401: wrong credentials', () => {
  it('keep being reported as Unauthorized (with backoff, without crashing) until the credentials rotate', async () => {
    api = await startApiServer({ token: 'right' });
    api.create('configmaps', cm('a'));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'emulator', server: api.url, skipTLSVerify: true }],
      users: [{ name: 'someone', token: 'wrong' }],
      contexts: [{ name: 'emulator', cluster: 'emulator', user: 'someone' }],
      currentContext: 'emulator',
    });
    live = run(api, ConfigMap, { backoff }, kc);
    await waitFor('four Unauthorized errors', () => live!.errors.length >= 4);
    // Waits of 10, 20, 40, 40 … ms (jitter up to twice that) between attempts: never a request loop.
    const lists = live.lists();
    lists.slice(1).forEach((r, i) => expect(r.at - lists[i]!.at).toBeGreaterThanOrEqual(Math.min(10 * 2 ** i, 40) - 2));
    expect(new Set(live.errors.map((e) => `${e.reason} ${e.status}`))).toEqual(new Set(['Unauthorized 401']));
    expect(live.synced()).toBe(false);

    (kc.getCurrentUser() as { token?: string }).token = 'right';
    await waitFor('the informer to sync', live.synced, 2000);
    await converged(api, live, 'configmaps');
  });
});

describe('403: forbidden', () => {
  it('on lists and on a watch: reported, backed off, relisted, never a stop', async () => {
    api = await startApiServer();
    api.create('configmaps', cm('a'));
    api.faults.add({ match: { watch: false }, times: 3, fault: { type: 'status', code: 403 } });
    api.faults.add({ match: { watch: true }, fault: { type: 'status', code: 403 } });
    live = run(api, ConfigMap, { backoff, random: () => 0 });
    await waitFor('a second watch', () => live!.watches().length === 2);
    api.create('configmaps', cm('b'));
    await converged(api, live, 'configmaps');
    expect(live.errors.map((e) => `${e.reason} ${e.phase}`)).toEqual([
      'Forbidden list',
      'Forbidden list',
      'Forbidden list',
      'Forbidden watch',
    ]);
    const lists = live.lists();
    expect(lists.map((l) => l.status)).toEqual([403, 403, 403, 200, 200]); // a 403 on a watch relists
    // Waits of 10, 20, 40 ms between the refused lists.
    expect(lists[1]!.at - lists[0]!.at).toBeGreaterThanOrEqual(10 - 2);
    expect(lists[2]!.at - lists[1]!.at).toBeGreaterThanOrEqual(20 - 2);
    expect(lists[3]!.at - lists[2]!.at).toBeGreaterThanOrEqual(40 - 2);
  });
});

describe('credentials that rotate', () => {
  it('an exec credential without expirationTimestamp: a 401 runs the plugin again, and the informer recovers', async () => {
    api = await startApiServer({ tls: true, token: 'one' });
    api.create('configmaps', cm('a'));
    const at = tempDir();
    writeFileSync(join(at, 'token'), 'one');
    writeFileSync(join(at, 'runs'), '');
    writeFileSync(
      join(at, 'plugin.mjs'),
      `import { appendFileSync, readFileSync } from 'node:fs';
       const dir = process.env.PLUGIN_DIR;
       appendFileSync(dir + '/runs', 'x');
       const token = readFileSync(dir + '/token', 'utf8');
       process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } }));`,
    );
    const runs = () => readFileSync(join(at, 'runs'), 'utf8').length;
    const kc = tlsKubeConfig(
      api.url,
      { caData: Buffer.from(api.caPem!).toString('base64') },
      {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: [join(at, 'plugin.mjs')],
          env: [{ name: 'PLUGIN_DIR', value: at }],
          interactiveMode: 'Never',
        },
      },
    );
    live = run(api, ConfigMap, { backoff }, kc);
    await waitFor('the informer to sync', live.synced);
    expect(runs()).toBe(1); // cached while it is accepted

    // The server revokes the token; the plugin would now hand out another one.
    writeFileSync(join(at, 'token'), 'two');
    api.setToken('two');
    api.closeWatches();
    await waitFor('a 401', () => live!.errors.some((e) => e.reason === 'Unauthorized'));
    api.create('configmaps', cm('b'));
    await converged(api, live, 'configmaps');
    expect(runs()).toBeGreaterThanOrEqual(2);
    // The 401s before the plugin ran again (and, maybe, the closed watch counted as a VeryShortWatch).
    expect(live.errors.map((e) => `${e.reason} ${e.status}`)).toContain('Unauthorized 401');
    expect(live.errors.filter((e) => e.reason !== 'Unauthorized' && e.reason !== 'VeryShortWatch')).toEqual([]);
  });

  it('a CA file swapped on disk (the server came back with another certificate) is read again', async () => {
    api = await startApiServer({ tls: true });
    api.create('configmaps', cm('a'));
    const caFile = join(tempDir(), 'ca.crt');
    writeFileSync(caFile, TEST_TLS_CERT);
    const kc = tlsKubeConfig(api.url, { caFile }, {});
    live = run(api, ConfigMap, { backoff }, kc);
    await waitFor('the informer to sync', live.synced);
    await converged(api, live, 'configmaps');

    const port = api.port;
    await api.close();
    writeFileSync(caFile, TEST_TLS_CERT_B);
    api = await startApiServer({ tls: { cert: TEST_TLS_CERT_B, key: TEST_TLS_KEY_B }, port });
    // The same cluster's data (same revisions), and changes made since.
    api.create('configmaps', cm('a'));
    api.create('configmaps', cm('b'));
    // Before: the agent kept trusting the first CA ("self-signed certificate") forever.
    await converged(api, live, 'configmaps');
  });

  it('a client certificate and key swapped on disk are read again', async () => {
    api = await startApiServer({ tls: { cert: TEST_TLS_CERT, key: TEST_TLS_KEY, clientCa: TEST_TLS_CERT_B } });
    api.create('configmaps', cm('a'));
    const certFile = join(tempDir(), 'client.crt');
    const keyFile = join(tempDir(), 'client.key');
    writeFileSync(certFile, TEST_TLS_CERT_B);
    writeFileSync(keyFile, TEST_TLS_KEY_B);
    const kc = tlsKubeConfig(api.url, { caData: Buffer.from(TEST_TLS_CERT).toString('base64') }, { certFile, keyFile });
    live = run(api, ConfigMap, { backoff }, kc);
    await waitFor('the informer to sync', live.synced);
    await converged(api, live, 'configmaps');

    // The server now trusts only the new client certificate.
    const port = api.port;
    await api.close();
    api = await startApiServer({ tls: { cert: TEST_TLS_CERT, key: TEST_TLS_KEY, clientCa: TEST_TLS_CERT_C }, port });
    api.create('configmaps', cm('a')); // the same cluster's data, and a change
    api.create('configmaps', cm('b'));
    await waitFor('the old certificate to be refused', () => live!.errors.length >= 3);
    writeFileSync(certFile, TEST_TLS_CERT_C);
    writeFileSync(keyFile, TEST_TLS_KEY_C);
    await converged(api, live, 'configmaps');
  });

  it('while the TLS material stays the same, requests share one connection; when it changes, the idle one is closed', async () => {
    api = await startApiServer({ tls: true });
    const caFile = join(tempDir(), 'ca.crt');
    writeFileSync(caFile, TEST_TLS_CERT);
    const listWatch = httpListWatch(tlsKubeConfig(api.url, { caFile }, {}), { resource: ConfigMap });
    for (let i = 0; i < 5; i++) await firstValueFrom(listWatch.list({}));
    expect(api.acceptedConnections).toBe(1);
    expect(new Set(api.requests.map((r) => r.status))).toEqual(new Set([200]));

    writeFileSync(caFile, TEST_TLS_CERT + TEST_TLS_CERT_B); // still trusts the server, but other bytes
    for (let i = 0; i < 3; i++) await firstValueFrom(listWatch.list({}));
    expect(api.acceptedConnections).toBe(2);
    await waitFor('the first connection to close', () => api!.openConnections === 1);
  });

  it('a watch open on the old TLS material carries on; its connection closes when it ends', async () => {
    api = await startApiServer({ tls: true });
    const caFile = join(tempDir(), 'ca.crt');
    writeFileSync(caFile, TEST_TLS_CERT);
    const listWatch = httpListWatch(tlsKubeConfig(api.url, { caFile }, {}), { resource: ConfigMap });
    const frames: unknown[] = [];
    let ended = false;
    listWatch.watch({ resourceVersion: api.resourceVersion }).subscribe({ next: (f) => frames.push(f), complete: () => (ended = true) });
    await waitFor('the watch', () => api!.activeWatches === 1);

    writeFileSync(caFile, TEST_TLS_CERT + TEST_TLS_CERT_B);
    await firstValueFrom(listWatch.list({}));
    expect(api.openConnections).toBe(2);
    api.create('configmaps', cm('a'));
    await waitFor('the event on the old connection', () => frames.length === 1);

    api.closeWatches();
    await waitFor('the watch to end', () => ended);
    await waitFor('its connection to close (not pooled)', () => api!.openConnections === 1);
  });
});
