/**
 * 410 Expired / Gone on every path, through the emulator: at the start of a
 * watch, mid-stream, on a list at a resourceVersion, and on page 2+ of a list.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from './harness/live.ts';

let api: ApiServer | undefined;
let live: Running<ConfigMap> | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

const rvOf = (o: { metadata?: { resourceVersion?: string } }) => o.metadata?.resourceVersion;

describe('410 on a watch', () => {
  it('at the start of a watch (its resourceVersion was compacted while it backed off): reported, then a relist at the last resourceVersion', async () => {
    api = await startApiServer();
    const a = api.create('configmaps', cm('a'));
    api.faults.add({ match: { watch: true }, fault: { type: 'status', code: 503 } });
    live = run(api, ConfigMap, { backoff: { initialMs: 150, maxMs: 150 }, random: () => 0 });
    await waitFor('the initial list', live.synced);
    // While the informer waits to watch again from a's revision, history moves on and is compacted.
    api.create('configmaps', cm('b'));
    api.delete('configmaps', 'default', 'a');
    api.compact();
    await converged(api, live, 'configmaps');

    const [refused, expired] = live.watches();
    expect(refused?.status).toBe(503);
    expect(expired).toMatchObject({ ended: 'expired', status: 200 });
    expect(expired?.query['resourceVersion']).toBe(rvOf(a));
    expect(live.errors.map((e) => [e.reason, e.phase])).toEqual([
      ['ServerError', 'watch'],
      ['Expired', 'watch'],
    ]);
    // client-go relists at the last resourceVersion first (served "not older than" it), unpaged.
    const relist = live.lists()[1];
    expect(relist?.query['resourceVersion']).toBe(rvOf(a));
    expect(relist?.query['limit']).toBeUndefined();
    // a's deletion was missed while the watch was down: a tombstone from the relist.
    expect(
      live.events.filter((e) => e.type === 'deleted').map((e) => [e.object.metadata.name, e.type === 'deleted' && e.finalStateUnknown]),
    ).toEqual([['a', true]]);
  });

  it('mid-stream (an ERROR event with a 410 Status): reported, then a relist; no event is lost', async () => {
    api = await startApiServer();
    api.faults.add({ match: { watch: true }, fault: { type: 'expireWatch', afterEvents: 1 } });
    live = run(api, ConfigMap, { backoff: { initialMs: 10, maxMs: 20 } });
    await waitFor('the initial list', live.synced);
    const x = api.create('configmaps', cm('x'));
    api.create('configmaps', cm('y')); // not sent: the watch ended with the ERROR after x
    await converged(api, live, 'configmaps');
    expect(live.watches()[0]).toMatchObject({ fault: 'expireWatch', ended: 'fault', eventsSent: 1 });
    expect(live.errors).toHaveLength(1);
    expect(live.errors[0]).toMatchObject({ reason: 'Expired', status: 410, phase: 'watch' });
    expect(live.lists().map((l) => l.query['resourceVersion'])).toEqual(['0', rvOf(x)]);
    // x again from the relist, as a resync (same resourceVersion), then y.
    expect(live.events.map((e) => `${e.type} ${e.object.metadata.name}${e.type === 'updated' && e.resync ? ' (resync)' : ''}`)).toEqual([
      'added x',
      'updated x (resync)',
      'added y',
    ]);
  });
});

describe('410 on a list', () => {
  it('at a resourceVersion: retried at once with resourceVersion "" (the latest state), paged', async () => {
    api = await startApiServer();
    for (const n of ['a', 'b', 'c']) api.create('configmaps', cm(n));
    api.faults.add({ match: { watch: false }, fault: { type: 'status', code: 410 } });
    live = run(api, ConfigMap, { pageSize: 5, backoff: { initialMs: 1000, maxMs: 1000 } });
    await waitFor('the store', () => live!.store()?.size === 3, 900); // well before the 1 s backoff
    const [expired, retry] = live.lists();
    expect(expired).toMatchObject({ status: 410, query: { resourceVersion: '0', limit: '5' } });
    expect(retry?.status).toBe(200);
    expect(retry?.query['resourceVersion']).toBeUndefined();
    expect(retry?.query['limit']).toBe('5');
    expect(live.errors.map((e) => [e.reason, e.phase])).toEqual([['Expired', 'list']]);
  });

  it('on page 2+ (the continue token compacted between pages): the whole list restarts at the latest state, in one unpaged request', async () => {
    api = await startApiServer();
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.create('configmaps', cm(n));
    api.faults.add({ match: { watch: false }, fault: { type: 'status', code: 410 } }); // rv "0" → retry at "", paged
    let between: { metadata?: { resourceVersion?: string } } | undefined;
    api.faults.add({
      match: {
        watch: false,
        predicate: (r) => {
          if (r.query['continue'] === undefined) return false;
          // Between page 1 and page 2: a write, and the history compacted past page 1's revision.
          between = api!.create('configmaps', cm('f'));
          api!.compact();
          return true;
        },
      },
      fault: { type: 'delay', ms: 0 },
    });
    live = run(api, ConfigMap, { pageSize: 2, backoff: { initialMs: 1000, maxMs: 1000 } });
    await converged(api, live, 'configmaps', undefined, 900);

    const lists = live.lists();
    expect(
      lists.map((l) => [
        l.status,
        l.query['resourceVersion'] ?? '',
        l.query['limit'] ?? '',
        l.query['continue'] === undefined ? '' : 'continue',
      ]),
    ).toEqual([
      [410, '0', '2', ''],
      [200, '', '2', ''],
      [410, '', '2', 'continue'],
      [200, '', '', ''], // unpaged, at the latest state
    ]);
    expect(live.errors.map((e) => [e.reason, e.phase])).toEqual([
      ['Expired', 'list'],
      ['Expired', 'list'],
    ]);
    // One replace with everything, f included; the watch starts from the full list's revision.
    expect(live.events.map((e) => e.object.metadata.name)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    await waitFor('the watch', () => live!.watches().length === 1);
    expect(live.watches()[0]?.query['resourceVersion']).toBe(rvOf(between!));
  });
});
