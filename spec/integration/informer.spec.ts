import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { ConfigMap, informer, type InformerEvent } from '../../src/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { configMap, json, smallServer } from './smallServer.ts';
import { hasUnparsedMembers } from '../../src/1-transport/lazyJson.ts';

describe('informer over HTTP (small local server)', () => {
  it('lists in pages, watches from the list resourceVersion, and keeps the store right; pages and watch share one keep-alive connection', async () => {
    const server = await smallServer(json(500, { kind: 'Status', code: 500 }));
    try {
      server.reply(
        json(200, { kind: 'ConfigMapList', metadata: { resourceVersion: '10', continue: 'tok' }, items: [configMap('a', '5')] }),
        json(200, { kind: 'ConfigMapList', metadata: { resourceVersion: '10' }, items: [configMap('b', '6')] }),
        (_req, res) => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          const lines = [
            { type: 'MODIFIED', object: { kind: 'ConfigMap', apiVersion: 'v1', ...configMap('a', '11', { k: 'é' }) } },
            { type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '12' } } },
            { type: 'DELETED', object: { kind: 'ConfigMap', apiVersion: 'v1', ...configMap('b', '13') } },
          ];
          const text = Buffer.from(lines.map((l) => JSON.stringify(l) + '\n').join(''));
          // Split inside the multi-byte é and inside lines.
          const cut = text.indexOf(Buffer.from('é')) + 1;
          res.write(text.subarray(0, cut));
          setTimeout(() => res.write(text.subarray(cut, cut + 7)), 5);
          setTimeout(() => res.write(text.subarray(cut + 7)), 10);
        },
      );
      const cms = informer(server.kc, ConfigMap, { namespace: 'default', pageSize: 1 });
      // Keep the informer running across the awaits below (the last unsubscribe would stop it).
      const running = cms.state$.subscribe();
      const events = await firstValueFrom(cms.events$.pipe(take(4), toArray()));
      expect(events.map((e: InformerEvent<ConfigMap>) => [e.type, e.object.metadata.name])).toEqual([
        ['added', 'a'],
        ['added', 'b'],
        ['updated', 'a'],
        ['deleted', 'b'],
      ]);
      const updated = events[2];
      expect(updated?.type === 'updated' && updated.oldObject.metadata.resourceVersion).toBe('5');
      expect(updated?.object.data).toEqual({ k: 'é' });
      const store = await firstValueFrom(cms.store$.pipe(filter((s) => s.size === 1)));
      expect(store.keys()).toEqual(['default/a']);
      expect(store.byIndex('namespace', 'default').map((o) => o.metadata.name)).toEqual(['a']);
      const [list1, list2, watch] = server.requests;
      expect(list1?.pathname).toBe('/api/v1/namespaces/default/configmaps');
      expect(list1?.searchParams.get('limit')).toBe('1');
      expect(list1?.searchParams.get('resourceVersion')).toBe('0');
      expect(list2?.searchParams.get('continue')).toBe('tok');
      expect(list2?.searchParams.has('resourceVersion')).toBe(false);
      expect(watch?.searchParams.get('watch')).toBe('1');
      expect(watch?.searchParams.get('resourceVersion')).toBe('10');
      expect(watch?.searchParams.get('allowWatchBookmarks')).toBe('true');
      const timeoutSeconds = Number(watch?.searchParams.get('timeoutSeconds'));
      expect(timeoutSeconds).toBeGreaterThanOrEqual(300);
      expect(timeoutSeconds).toBeLessThan(600);
      // client-node's agent has no keep-alive; ours does, so the pages and the watch came over one connection.
      expect(new Set(server.ports).size).toBe(1);
      expect(server.open.size).toBe(1);
      running.unsubscribe();
      // The abort reaches the server a moment later (later still on a loaded machine): wait for it, in polls, not ms.
      for (let polls = 0; polls < 400 && server.open.size > 0; polls++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(server.open.size).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('informer over HTTP with lazyDecode', () => {
  it('caches objects whose members beyond metadata are parsed on first read, non-ASCII text included', async () => {
    const server = await smallServer(json(500, { kind: 'Status', code: 500 }));
    try {
      const long = 'x'.repeat(64);
      server.reply(
        json(200, {
          kind: 'ConfigMapList',
          metadata: { resourceVersion: '10' },
          items: [configMap('a', '5', { k: long }), configMap('b', '6', { k: long })],
        }),
        (_req, res) => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          const lines = [
            { type: 'MODIFIED', object: { kind: 'ConfigMap', apiVersion: 'v1', ...configMap('a', '11', { k: `${long}-2` }) } },
            { type: 'MODIFIED', object: { kind: 'ConfigMap', apiVersion: 'v1', ...configMap('b', '12', { k: `${long}-é` }) } },
          ];
          res.write(lines.map((l) => JSON.stringify(l) + '\n').join(''));
        },
      );
      const cms = informer(server.kc, ConfigMap, { namespace: 'default', http: { lazyDecode: true } });
      const running = cms.state$.subscribe();
      const events = await firstValueFrom(cms.events$.pipe(take(4), toArray()));
      expect(events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion])).toEqual([
        ['added', 'a', '5'],
        ['added', 'b', '6'],
        ['updated', 'a', '11'],
        ['updated', 'b', '12'],
      ]);
      const [listedA, , watchedA, watchedB] = events.map((e) => e.object);
      // Listed items got apiVersion/kind like eager ones; data stayed unparsed until read here.
      expect(listedA).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
      expect(hasUnparsedMembers(listedA!)).toBe(true);
      expect(hasUnparsedMembers(watchedA!)).toBe(true);
      expect(hasUnparsedMembers(watchedB!)).toBe(true);
      expect(listedA!.data).toEqual({ k: long });
      expect(watchedA!.data).toEqual({ k: `${long}-2` });
      expect(watchedB!.data).toEqual({ k: `${long}-é` });
      expect(hasUnparsedMembers(listedA!)).toBe(false);
      expect(hasUnparsedMembers(watchedB!)).toBe(false);
      running.unsubscribe();
    } finally {
      await server.close();
    }
  });
});

describe.each([false, true])('a list response that is not JSON (lazyDecode: %s)', (lazyDecode) => {
  it('is a MalformedLine error that says why, the same with and without lazy decoding', async () => {
    const server = await smallServer(json(500, { kind: 'Status', code: 500 }));
    try {
      server.reply((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"kind":"ConfigMapList","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a"}');
      });
      const listWatch = httpListWatch(server.kc, { resource: ConfigMap, namespace: 'default' }, { lazyDecode });
      const error: unknown = await firstValueFrom(listWatch.list({ limit: 10 })).catch((e: unknown) => e);
      expect(error).toMatchObject({ reason: 'MalformedLine', phase: 'list' });
      expect((error as Error).message).toMatch(/the response is not JSON \(92 bytes(, invalid at position \d+)?\)$/);
    } finally {
      await server.close();
    }
  });
});
