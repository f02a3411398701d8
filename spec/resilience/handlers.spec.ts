/**
 * Handlers through the emulator: one that throws (or rejects) harms nothing
 * and is reported as HandlerError; one that is slow gets a backlog bounded by
 * the number of distinct keys while the store keeps up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, keyOf, type InformerEvent } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, contents, converged, run, waitFor, type Running } from './harness/live.ts';

let api: ApiServer | undefined;
let live: Running<ConfigMap> | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

const brief = (e: InformerEvent<ConfigMap>) => `${e.type} ${e.object.metadata.name}`;

/** The cache a handler would hold after these events, as `key@rv`. */
function replay(events: readonly InformerEvent<ConfigMap>[]): string[] {
  const view = new Map<string, string>();
  for (const e of events) {
    if (e.type === 'deleted') view.delete(keyOf(e.object));
    else view.set(keyOf(e.object), e.object.metadata.resourceVersion ?? '');
  }
  return [...view].map(([k, rv]) => `${k}@${rv}`).sort();
}

describe('a throwing handler', () => {
  it('is reported as HandlerError for each throw or rejection; other subscribers, the store and the watch are unaffected', async () => {
    api = await startApiServer();
    live = run(api, ConfigMap);
    const thrower: string[] = [];
    const rejecter: InformerEvent<ConfigMap>[] = [];
    const other: string[] = [];
    const subscriptions = [
      live.informer.on((e) => {
        thrower.push(brief(e));
        throw new Error(`sync boom on ${e.object.metadata.name}`);
      }),
      // Asynchronous: while its rejection is pending, the next events coalesce per key.
      live.informer.on(async (e) => {
        rejecter.push(e);
        throw new Error(`async boom on ${e.object.metadata.name}`);
      }),
      live.informer.on({
        added: (e) => void other.push(brief(e)),
        updated: (e) => void other.push(brief(e)),
        deleted: (e) => void other.push(brief(e)),
      }),
    ];
    try {
      await waitFor('the initial list', live.synced);
      api.create('configmaps', cm('a'));
      api.create('configmaps', cm('b'));
      api.patch('configmaps', 'default', 'a', { data: { v: '2' } });
      api.delete('configmaps', 'default', 'b');
      const all = ['added a', 'added b', 'updated a', 'deleted b'];
      await converged(api, live, 'configmaps');
      await waitFor(
        'every handler to catch up',
        () => other.length === 4 && thrower.length === 4 && replay(rejecter).join() === contents(live!.store()).join(),
      );

      expect(other).toEqual(all);
      expect(thrower).toEqual(all); // it goes on being called
      expect(rejecter.map(brief)).toContain('updated a');
      expect(live.events.map(brief)).toEqual(all);
      const handlerErrors = live.errors.filter((e) => e.reason === 'HandlerError');
      expect(live.errors).toHaveLength(4 + rejecter.length); // one per throw and per rejection, nothing else
      expect(handlerErrors).toHaveLength(4 + rejecter.length);
      expect(handlerErrors.every((e) => e.phase === 'handler' && e.cause instanceof Error)).toBe(true);
      expect(handlerErrors.map((e) => e.key).sort()).toEqual(
        [...thrower, ...rejecter.map(brief)].map((b) => `default/${b.split(' ')[1]}`).sort(),
      );
      expect(live.requests().map((r) => (r.watch ? 'watch' : 'list'))).toEqual(['list', 'watch']);
    } finally {
      subscriptions.forEach((s) => s.unsubscribe());
    }
  });
});

describe('a slow handler', () => {
  it('has a backlog bounded by the distinct keys (not the events) while the store keeps up, and ends at the store’s state', async () => {
    api = await startApiServer();
    live = run(api, ConfigMap);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handled: InformerEvent<ConfigMap>[] = [];
    const subscription = live.informer.on(async (e) => {
      handled.push(e);
      if (handled.length === 1) await gate; // stuck on its first event
    });
    try {
      await waitFor('the initial list', live.synced);
      const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
      for (const k of keys) api.create('configmaps', cm(k));
      for (let i = 0; i < 100; i++) for (const k of keys) api.patch('configmaps', 'default', k, { data: { i: String(i) } });
      api.delete('configmaps', 'default', 'k4');
      api.create('configmaps', cm('k4', 'default', { again: 'yes' }));
      api.delete('configmaps', 'default', 'k3');

      // 507 events: the store follows them all while the handler still sits on the first.
      await converged(api, live, 'configmaps');
      expect(live.events).toHaveLength(5 + 500 + 3);
      expect(handled).toHaveLength(1);

      release();
      await waitFor('the handler to catch up', () => replay(handled).join() === contents(live!.store()).join());
      // k0's updates merged into one; k1, k2 and k4 one add each (k4's recreate included); k3's add and delete cancelled out.
      expect(handled.length - 1).toBeLessThanOrEqual(2 * keys.length);
      expect(handled.slice(1).map(brief).sort()).toEqual(['added k1', 'added k2', 'added k4', 'updated k0']);
      const k0 = handled.find((e) => e.type === 'updated');
      expect(k0?.type === 'updated' && k0.oldObject.metadata.resourceVersion).toBe(handled[0]?.object.metadata.resourceVersion);
    } finally {
      subscription.unsubscribe();
    }
  });
});
