/**
 * `informer(kc, r, { http: { keepObject } })` on the emulator: the objects the predicate rejects are not cached (they
 * were cached as `{ metadata }` skeletons, a ConfigMap without its `data`) and their watch events are not delivered.
 */
import { EMPTY, filter, firstValueFrom, Subject, Subscription, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, InformerError, informer } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { keepObjectFaults } from '../../src/5-informer/keepObjectFaults.ts';
import type { ListWatch, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { watchEvent } from '../../src/testing/index.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('informer() with an http.keepObject', () => {
  const cases: readonly { name: string; encoding: 'json' | 'protobuf'; namespaces?: string[]; maxNamespaceWatches?: number }[] = [
    { name: 'json', encoding: 'json' },
    { name: 'protobuf', encoding: 'protobuf' },
    // Two namespaces read one by one (fewer than `maxNamespaceWatches`): each namespace's read gets the keepObject.
    { name: 'namespaces, one by one', encoding: 'json', namespaces: ['a', 'b'] },
    // Past maxNamespaceWatches: one cluster-wide read, its own keepObject (the namespaces) and the caller's.
    { name: 'namespaces, cluster-wide', encoding: 'json', namespaces: ['a', 'b'], maxNamespaceWatches: 1 },
  ];
  for (const { name, encoding, namespaces, maxNamespaceWatches } of cases) {
    it(`caches and delivers only the objects it keeps (${name})`, async () => {
      api = await startApiServer({ namespaces: ['a', 'b'] });
      for (const namespace of ['a', 'b'])
        for (const name of ['x', 'y']) api.create('configmaps', { metadata: { name, namespace }, data: { k: name } });
      const keepObject = (skeleton: { metadata: { namespace?: string } }) => skeleton.metadata.namespace === 'a';
      const http = { lazyDecode: true, encoding, keepObject };
      const configMaps = informer(api.kubeConfig, ConfigMap, { namespaces, maxNamespaceWatches, http });
      const changes = firstValueFrom(configMaps.events$.pipe(take(3), toArray()));
      const running = configMaps.store$.subscribe();
      try {
        await firstValueFrom(configMaps.synced$.pipe(filter(Boolean)));
        const store = await firstValueFrom(configMaps.store$);
        expect(store.keys().sort()).toEqual(['a/x', 'a/y']);
        expect(store.list().map((cm) => cm.data)).toEqual([{ k: 'x' }, { k: 'y' }]);
        // Watched in this order: b/z first; a/z is delivered, b/z is not (nor its delete).
        api.create('configmaps', { metadata: { name: 'z', namespace: 'b' }, data: { k: 'z' } });
        api.delete('configmaps', 'b', 'x');
        api.create('configmaps', { metadata: { name: 'z', namespace: 'a' }, data: { k: 'z' } });
        const seen = (await changes).map((event) => `${event.type} ${event.object.metadata.namespace}/${event.object.metadata.name}`);
        expect(seen).toEqual(['added a/x', 'added a/y', 'added a/z']);
        expect((await firstValueFrom(configMaps.store$)).keys().sort()).toEqual(['a/x', 'a/y', 'a/z']);
      } finally {
        running.unsubscribe();
      }
    });
  }

  for (const { name, encoding, namespaces, maxNamespaceWatches } of cases) {
    it(`reports what it throws, keeps that object and goes on watching (${name})`, async () => {
      api = await startApiServer({ namespaces: ['a', 'b'] });
      for (const namespace of ['a', 'b']) api.create('configmaps', { metadata: { name: 'x', namespace }, data: { k: 'x' } });
      api.create('configmaps', { metadata: { name: 'bad', namespace: 'a' }, data: { k: 'bad' } });
      const keepObject = (skeleton: { metadata: { name?: string; namespace?: string } }) => {
        if (skeleton.metadata.name?.startsWith('bad')) throw new Error(`no rule for ${skeleton.metadata.name}`);
        return skeleton.metadata.namespace === 'a';
      };
      const http = { lazyDecode: true, encoding, keepObject };
      const configMaps = informer(api.kubeConfig, ConfigMap, { namespaces, maxNamespaceWatches, http });
      const errors: InformerError[] = [];
      const seen: string[] = [];
      const running = new Subscription();
      running.add(configMaps.errors$.subscribe((error) => errors.push(error)));
      running.add(configMaps.events$.subscribe((e) => seen.push(`${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`)));
      try {
        await firstValueFrom(configMaps.synced$.pipe(filter(Boolean)));
        expect((await firstValueFrom(configMaps.store$)).keys().sort()).toEqual(['a/bad', 'a/x']);
        expect(errors.map((e) => [e.reason, e.phase, e.key, e.message])).toEqual([
          ['HandlerError', 'decode', 'a/bad', 'http.keepObject threw for a/bad: no rule for bad; kept'],
        ]);
        // In a watch: reported with the event it was met in, which is delivered; the watch goes on.
        api.create('configmaps', { metadata: { name: 'bad2', namespace: 'b' }, data: { k: 'bad2' } });
        api.create('configmaps', { metadata: { name: 'y', namespace: 'a' }, data: { k: 'y' } });
        // (Read one by one, b/bad2 and a/y come on two watches, in either order.)
        await firstValueFrom(configMaps.events$.pipe(filter(() => seen.length === 4)));
        expect(seen.slice(0, 2).sort()).toEqual(['added a/bad', 'added a/x']);
        expect(seen.slice(2).sort()).toEqual(['added a/y', 'added b/bad2']);
        expect(errors.slice(1).map((e) => [e.reason, e.key, e.message])).toEqual([
          ['HandlerError', 'b/bad2', 'http.keepObject threw for b/bad2: no rule for bad2; kept'],
        ]);
      } finally {
        running.unsubscribe();
      }
    });
  }
});

describe('keepObjectFaults (the wrapper, without a server)', () => {
  it('a throw met while a watch frame was decoded is reported before that frame, not after it', () => {
    const faults = keepObjectFaults(() => {
      throw new Error('boom');
    });
    const frames = new Subject<WatchFrame>();
    const listWatch: ListWatch = { list: () => EMPTY, watch: () => frames };
    const out: WatchFrame[] = [];
    faults
      .reporting(listWatch)
      .watch({})
      .subscribe((frame) => out.push(frame));
    const frame = watchEvent('ADDED', { metadata: { name: 'x', namespace: 'ns', resourceVersion: '2' } });
    expect(faults.keep({ metadata: { name: 'x', namespace: 'ns' } })).toBe(true); // the transport decoding `frame`
    frames.next(frame);
    expect(out).toHaveLength(2);
    expect(out[0]).toBeInstanceOf(InformerError);
    expect(out[0]).toMatchObject({ reason: 'HandlerError', phase: 'decode', key: 'ns/x' });
    expect(out[1]).toBe(frame);
  });
});
