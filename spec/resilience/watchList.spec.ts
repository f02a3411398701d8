/**
 * Streaming lists (`watchList: true`) through the emulator: the initial
 * objects through the watch and one replace at the initial-events-end
 * bookmark; the fallback to list + watch on a 1.20 server (422), and after a
 * stream cut short (for that relist only).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Subscription } from 'rxjs';
import { ConfigMap } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from './harness/live.ts';

let api: ApiServer | undefined;
let live: Running<ConfigMap> | undefined;
let extra: Subscription | undefined;
afterEach(async () => {
  extra?.unsubscribe();
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

const rvOf = (o: { metadata?: { resourceVersion?: string } }) => o.metadata?.resourceVersion;

describe('streaming lists', () => {
  it('bring the initial objects through the watch, replace them at the initial-events-end bookmark, then carry on on the same watch', async () => {
    api = await startApiServer();
    for (const n of ['a', 'b', 'c']) api.create('configmaps', cm(n));
    live = run(api, ConfigMap, { watchList: true });
    const steps: string[] = [];
    const synced: boolean[] = [];
    extra = live.informer.state$.subscribe((s) =>
      steps.push(`${s.step}${s.events.length ? ` ${s.events.map((e) => `${e.type[0]}${e.object.metadata.name}`).join('')}` : ''}`),
    );
    extra.add(live.informer.synced$.subscribe((s) => synced.push(s)));
    await waitFor('the initial events', live.synced);

    expect(live.lists()).toEqual([]);
    const [stream] = live.watches();
    expect(stream?.query).toMatchObject({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' });
    expect(stream?.query['resourceVersion']).toBeUndefined(); // nothing known yet: the latest state
    // No object one by one before the bookmark: one replace with all three.
    expect(steps.filter((s) => s !== 'watch' && s !== 'start')).toEqual(['replace aaabac']);
    expect(synced).toEqual([false, true]);
    expect(live.events.every((e) => e.type === 'added' && e.isInInitialList)).toBe(true);

    api.create('configmaps', cm('d'));
    await converged(api, live, 'configmaps');
    expect(live.events.at(-1)).toMatchObject({ type: 'added', isInInitialList: false });
    expect(live.requests()).toHaveLength(1); // the same watch goes on
    expect(live.errors).toEqual([]);
  });

  it('fall back to list + watch for good on a 1.20 server, which answers 422 to the streaming parameters', async () => {
    api = await startApiServer({ sendInitialEvents: false });
    api.create('configmaps', cm('a'));
    // The first plain watch expires after one event: the relist must be a plain list again.
    api.faults.add({ match: { watch: true }, skip: 1, fault: { type: 'expireWatch', afterEvents: 1 } });
    live = run(api, ConfigMap, { watchList: true, backoff: { initialMs: 10, maxMs: 20 } });
    await waitFor('the fallback list', live.synced);
    const x = api.create('configmaps', cm('x'));
    await waitFor('a relist', () => live!.lists().length === 2);
    api.create('configmaps', cm('y'));
    await converged(api, live, 'configmaps');

    const [refused, plain, afterRelist] = live.watches();
    expect(refused).toMatchObject({ status: 422, query: { sendInitialEvents: 'true' } });
    for (const w of [plain, afterRelist]) expect(w?.query['sendInitialEvents']).toBeUndefined();
    expect(live.lists().map((l) => l.query['resourceVersion'])).toEqual(['0', rvOf(x)]);
    expect(live.errors.map((e) => [e.reason, e.status, e.phase])).toEqual([
      ['Invalid', 422, 'watch'],
      ['Expired', 410, 'watch'],
    ]);
  });

  it('a stream cut short before the bookmark: reported, list + watch for that relist, and the next relist streams again', async () => {
    api = await startApiServer();
    for (const n of ['a', 'b']) api.create('configmaps', cm(n));
    api.faults.schedule({ watch: true }, [{ type: 'closeWatch' }, { type: 'expireWatch', afterEvents: 1 }]);
    live = run(api, ConfigMap, { watchList: true, backoff: { initialMs: 10, maxMs: 20 } });
    await waitFor('the fallback list', live.synced);
    api.create('configmaps', cm('c')); // the plain watch expires after it: relist
    await waitFor('a third watch', () => live!.watches().length === 3);
    api.create('configmaps', cm('d'));
    await converged(api, live, 'configmaps');

    const [cut, plain, again] = live.watches();
    expect(cut).toMatchObject({ fault: 'closeWatch', ended: 'fault', query: { sendInitialEvents: 'true' } });
    expect(plain?.query['sendInitialEvents']).toBeUndefined();
    expect(again?.query).toMatchObject({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' });
    expect(live.lists()).toHaveLength(1);
    expect(live.errors.map((e) => e.reason)).toEqual(['WatchError', 'Expired']);
  });
});
