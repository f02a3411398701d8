/**
 * 401, 403 and 404 are reported and retried, never a permanent stop: a CRD
 * installed after the informer started, credentials that are wrong and then
 * rotated, a 403 on lists and on a watch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, customResource, type KubeObject } from '../../src/index.ts';
import { startApiServer, type ApiServer } from '../../src/testing/index.ts';
import { cm, converged, run, waitFor, type Running } from './harness/live.ts';
import { sleep } from './harness/probes.ts';

let api: ApiServer | undefined;
let live: Running<KubeObject> | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

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
    api.create('apples.stable.example.com', { apiVersion: 'stable.example.com/v1', kind: 'Apple', metadata: { name: 'red', namespace: 'default' } });
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
    await sleep(400);
    // Waits of 10, 20, 40, 40 … ms (jitter up to twice that): a handful of attempts, not hundreds.
    expect(live.errors.length).toBeGreaterThanOrEqual(4);
    expect(live.errors.length).toBeLessThanOrEqual(25);
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
    expect(live.errors.map((e) => `${e.reason} ${e.phase}`)).toEqual(['Forbidden list', 'Forbidden list', 'Forbidden list', 'Forbidden watch']);
    const lists = live.lists();
    expect(lists.map((l) => l.status)).toEqual([403, 403, 403, 200, 200]); // a 403 on a watch relists
    // Waits of 10, 20, 40 ms between the refused lists.
    expect(lists[1]!.at - lists[0]!.at).toBeGreaterThanOrEqual(10 - 2);
    expect(lists[2]!.at - lists[1]!.at).toBeGreaterThanOrEqual(20 - 2);
    expect(lists[3]!.at - lists[2]!.at).toBeGreaterThanOrEqual(40 - 2);
  });
});
