import { afterEach, describe, expect, it, vi } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call, fixture, fixtureText, normalize, openWatch, sleep, watchAll } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const CM = { group: '', version: 'v1', resource: 'configmaps' } as const;
const BASE = '/api/v1/namespaces/fixtures/configmaps';

/** namespace `fixtures` at 688, cm-1..cm-5 at 689..693 (case 2 / 03a). */
async function case2(opts: Parameters<typeof startApiServer>[0] = {}): Promise<ApiServer> {
  const s = await startApiServer({ startResourceVersion: 687, namespaces: ['fixtures'], ...opts });
  for (let i = 1; i <= 5; i++) {
    s.create(CM, { metadata: { name: `cm-${i}`, namespace: 'fixtures', labels: { app: i % 2 ? 'a' : 'b' } }, data: { key: `value-${i}` } });
  }
  return s;
}

const stripManaged = (line: string): unknown => {
  const ev = JSON.parse(line);
  if (ev.object?.metadata) delete ev.object.metadata.managedFields;
  return normalize(ev);
};

describe('watch', () => {
  it('replays 03b live: chunked NDJSON, ADDED/MODIFIED/DELETED with RV gaps, DELETED at the deletion RV; each bookmark carries the last change before it', async () => {
    api = await case2({ bookmarkIntervalMs: 20 });
    const w = openWatch(api, `${BASE}?watch=true&resourceVersion=693&allowWatchBookmarks=true`);
    const head = await w.ready;
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json');
    expect(head.headers['transfer-encoding']).toBe('chunked');
    expect(head.headers['cache-control']).toBe('no-cache, private');
    expect(head.headers['x-kubernetes-pf-flowschema-uid']).toBeUndefined();

    // the writes of 03b's actions, plus an unrelated write for the 695 → 697 gap
    const created = api.create(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm-watch', namespace: 'fixtures', labels: { app: 'w' } },
      data: { k: 'v1' },
    });
    await sleep(5);
    const put1 = await call(api, 'PUT', `${BASE}/cm-watch`, { ...created, data: { k: 'v2' } });
    api.create('pods', { metadata: { name: 'elsewhere', namespace: 'fixtures' }, spec: { containers: [] } });
    const put2 = await call(api, 'PUT', `${BASE}/cm-watch`, { ...put1.body, data: { k: 'v3' } });
    expect(put2.status).toBe(200);
    await call(
      api,
      'PATCH',
      `${BASE}/cm-watch`,
      { metadata: { labels: { app: 'w2', extra: 'yes' } } },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    );
    await call(api, 'DELETE', `${BASE}/cm-watch`);
    const events = () => w.lines.filter((l) => l.event.type !== 'BOOKMARK');
    // then the next periodic bookmark, which carries the deletion's RV exactly as recorded
    while (events().length < 5 || w.lines.at(-1)!.event.type !== 'BOOKMARK') await w.waitLines(w.lines.length + 1);
    w.abort();

    const recorded = fixtureText('03b', 'ndjson').trimEnd().split('\n');
    expect(events().map((l) => stripManaged(l.text))).toEqual(recorded.slice(0, 5).map(stripManaged));
    // each line is exactly JSON.stringify of {type, object} (key order included)
    for (const l of events()) expect(l.text).toBe(JSON.stringify(l.event));
    // Bookmarks come whenever the timer fires (between any two writes on a slow machine): whatever their
    // number, each has the shape of 03b's and the revision of the last change before it.
    let last = '693';
    for (const l of w.lines) {
      if (l.event.type !== 'BOOKMARK') last = l.event.object.metadata.resourceVersion;
      else expect(l.text).toBe(recorded[5]!.replace('"699"', JSON.stringify(last)));
    }
    expect(w.lines.at(-1)!.text).toBe(recorded[5]);
    expect(api.requests.find((r) => r.watch)).toMatchObject({ status: 200, eventsSent: 5, resource: 'configmaps', namespace: 'fixtures' });
  });

  it('replays 03b from history: exact bookmarks, the last one just before the clean end at timeoutSeconds', async () => {
    api = await case2({ bookmarkIntervalMs: 50 });
    const created = api.create(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm-watch', namespace: 'fixtures', labels: { app: 'w' } },
      data: { k: 'v1' },
    });
    const put1 = api.update(CM, { ...created, data: { k: 'v2' } });
    api.create('pods', { metadata: { name: 'elsewhere', namespace: 'fixtures' }, spec: { containers: [] } });
    const put2 = api.update(CM, { ...put1, data: { k: 'v3' } });
    api.patch(CM, 'fixtures', 'cm-watch', { metadata: { labels: { app: 'w2', extra: 'yes' } } });
    api.delete(CM, 'fixtures', 'cm-watch');
    expect(put2.metadata!.resourceVersion).toBe('697');

    const result = await watchAll(api, `${BASE}?watch=true&resourceVersion=693&allowWatchBookmarks=true&timeoutSeconds=0.3`);
    expect(result.how).toBe('end');
    const recorded = fixtureText('03b', 'ndjson').trimEnd().split('\n');
    const events = result.lines.filter((l) => l.event.type !== 'BOOKMARK');
    expect(events.map((l) => l.event.object.metadata.resourceVersion)).toEqual(['694', '695', '697', '698', '699']);
    expect(events.map((l) => l.event.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    const bookmarks = result.lines.filter((l) => l.event.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThanOrEqual(1);
    for (const b of bookmarks) expect(b.text).toBe(recorded[5]);
    // The timeout (0.3 s, shorter than bookmarkBeforeTimeoutMs) brings a bookmark right before the end.
    expect(result.lines.at(-1)!.event.type).toBe('BOOKMARK');
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(api.requests.find((r) => r.watch)).toMatchObject({ eventsSent: 5, bookmarksSent: bookmarks.length, ended: 'timeout' });
  });

  it('times bookmarks like kube-apiserver by default: none periodic within a minute, one before the deadline (03b, 03d, 07f)', async () => {
    api = await case2();
    api.patch(CM, 'fixtures', 'cm-1', { data: { touched: 'yes' } }); // 694: a change after the watch's start RV
    const r = await watchAll(
      api,
      `${BASE}?watch=true&resourceVersion=693&allowWatchBookmarks=true&timeoutSeconds=0.2&labelSelector=app%3Dnomatch`,
    );
    expect(r.how).toBe('end');
    expect(r.lines.map((l) => [l.event.type, l.event.object.metadata.resourceVersion])).toEqual([['BOOKMARK', '694']]);
    // without allowWatchBookmarks, none
    const plain = await watchAll(api, `${BASE}?watch=true&resourceVersion=693&timeoutSeconds=0.05&labelSelector=app%3Dnomatch`);
    expect(plain.lines).toEqual([]);
  });

  it('sends the pre-timeout bookmark bookmarkBeforeTimeoutMs (default 2 s) before the deadline, and none after it', async () => {
    api = await case2();
    // The emulator's watch timers on a fake clock (setTimeout and performance.now); the sockets stay real. Each
    // "nothing yet" below is shown by a write sent after it: the stream is ordered, so a bookmark sent before
    // the write would be read before it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      api.patch(CM, 'fixtures', 'cm-1', { data: { touched: 'yes' } }); // 694
      const w = openWatch(api, `${BASE}?watch=true&resourceVersion=693&allowWatchBookmarks=true&timeoutSeconds=3`);
      // The backlog line: the watch has started, its timers armed at fake time 0 (the deadline at 3 s, the bookmark at 1 s).
      await w.waitLines(1);
      const seen = () => w.lines.map((l) => `${l.event.type} ${l.event.object.metadata.resourceVersion}`);
      /** Writes, and reads the stream up to the write's own event. */
      const writeAndRead = async (name: string) => {
        const rv = api!.patch(CM, 'fixtures', name, { data: { touched: 'yes' } }).metadata!.resourceVersion;
        for (let n = w.lines.length + 1; ; n++) {
          const lines = await w.waitLines(n);
          if (lines.some((l) => l.event.type === 'MODIFIED' && l.event.object.metadata.resourceVersion === rv)) return;
        }
      };
      const ended = () => api!.requests.find((r) => r.watch)?.ended;
      await vi.advanceTimersByTimeAsync(999);
      await writeAndRead('cm-2'); // 695
      expect(seen()).toEqual(['MODIFIED 694', 'MODIFIED 695']);
      await vi.advanceTimersByTimeAsync(1); // 1 s: the deadline less 2 s
      await writeAndRead('cm-3'); // 696
      expect(seen()).toEqual(['MODIFIED 694', 'MODIFIED 695', 'BOOKMARK 695', 'MODIFIED 696']);
      // Changes after the pre-timeout bookmark get none of their own, up to the very end.
      await vi.advanceTimersByTimeAsync(1999);
      await writeAndRead('cm-4'); // 697
      expect(seen()).toEqual(['MODIFIED 694', 'MODIFIED 695', 'BOOKMARK 695', 'MODIFIED 696', 'MODIFIED 697']);
      expect(ended()).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1); // 3 s: the end
      expect(ended()).toBe('timeout');
      const r = await w.done;
      expect(r.how).toBe('end');
      expect(seen()).toEqual(['MODIFIED 694', 'MODIFIED 695', 'BOOKMARK 695', 'MODIFIED 696', 'MODIFIED 697']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('sends no bookmark to an idle watch from the latest RV (03c)', async () => {
    api = await case2({ bookmarkIntervalMs: 20 });
    const r = await watchAll(api, `${BASE}?watch=true&resourceVersion=693&allowWatchBookmarks=true&timeoutSeconds=0.2`);
    expect(r.how).toBe('end');
    expect(r.lines).toEqual([]);
    expect(r.tailPartial).toBe('');
  });

  it('advances bookmarks past non-matching changes (03d)', async () => {
    api = await case2({ bookmarkIntervalMs: 30 });
    const w = openWatch(
      api,
      `${BASE}?watch=true&resourceVersion=693&allowWatchBookmarks=true&timeoutSeconds=0.25&labelSelector=app%3Dnomatch`,
    );
    await w.ready;
    const patched = api.patch(CM, 'fixtures', 'cm-1', { data: { touched: 'yes' } });
    const r = await w.done;
    expect(r.lines.length).toBeGreaterThan(0);
    for (const l of r.lines) {
      expect(l.event.type).toBe('BOOKMARK');
      expect(l.event.object.metadata.resourceVersion).toBe(patched.metadata!.resourceVersion);
    }
  });

  it('starts with synthetic ADDED sorted by name when RV is unset (03f) or 0 (03e); no marker follows', async () => {
    api = await case2({ bookmarkIntervalMs: 1000 });
    api.patch(CM, 'fixtures', 'cm-2', { data: { bumped: 'yes' } });
    for (const q of ['', '&resourceVersion=0']) {
      const r = await watchAll(api, `${BASE}?watch=true&allowWatchBookmarks=true&timeoutSeconds=0.1${q}`);
      expect(r.lines.map((l) => l.event.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED', 'ADDED']);
      expect(r.lines.map((l) => l.event.object.metadata.name)).toEqual(['cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5']);
      expect(r.lines.map((l) => l.event.object.metadata.resourceVersion)).toEqual(['689', '694', '691', '692', '693']);
    }
    // then live events
    const w = openWatch(api, `${BASE}?watch=1`);
    await w.waitLines(5);
    api.delete(CM, 'fixtures', 'cm-3');
    const lines = await w.waitLines(6);
    expect(lines[5]!.event.type).toBe('DELETED');
    w.abort();
  });

  it('turns selector transitions into ADDED / DELETED for that watcher, like the watch cache', async () => {
    api = await case2();
    const w = openWatch(api, `${BASE}?watch=true&resourceVersion=693&labelSelector=app%3Dx`);
    await w.ready;
    api.create(CM, { metadata: { name: 'moving', namespace: 'fixtures', labels: { app: 'y' } } });
    const toX = api.patch(CM, 'fixtures', 'moving', { metadata: { labels: { app: 'x' } } });
    const stillX = api.patch(CM, 'fixtures', 'moving', { data: { a: 'b' } });
    const toY = api.patch(CM, 'fixtures', 'moving', { metadata: { labels: { app: 'y' } } });
    api.delete(CM, 'fixtures', 'moving');
    api.create(CM, { metadata: { name: 'direct', namespace: 'fixtures', labels: { app: 'x' } } });
    const lines = await w.waitLines(4);
    w.abort();
    expect(lines.map((l) => l.event.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED', 'ADDED']);
    expect(lines[0]!.event.object.metadata.resourceVersion).toBe(toX.metadata!.resourceVersion);
    // the DELETED carries the last matching state, at the revision of the change that made it stop matching
    expect(lines[2]!.event.object.metadata.labels).toEqual({ app: 'x' });
    expect(lines[2]!.event.object.data).toEqual(stillX.data);
    expect(lines[2]!.event.object.metadata.resourceVersion).toBe(toY.metadata!.resourceVersion);
    expect(lines[3]!.event.object.metadata.name).toBe('direct');
  });

  it('scopes a namespaced watch to its namespace; an all-namespaces watch sees every namespace; /watch/ paths work', async () => {
    api = await startApiServer();
    const nsWatch = openWatch(api, '/api/v1/namespaces/a/configmaps?watch=true&resourceVersion=1');
    const allWatch = openWatch(api, '/api/v1/watch/configmaps?resourceVersion=1');
    await Promise.all([nsWatch.ready, allWatch.ready]);
    api.create(CM, { metadata: { name: 'x', namespace: 'b' } });
    api.create(CM, { metadata: { name: 'y', namespace: 'a' } });
    // A later object in namespace a: a watch writes in order, so once it arrives, b/x would have come before it.
    api.create(CM, { metadata: { name: 'z', namespace: 'a' } });
    const all = await allWatch.waitLines(3);
    const ns = await nsWatch.waitLines(2);
    expect(all.map((l) => `${l.event.object.metadata.namespace}/${l.event.object.metadata.name}`)).toEqual(['b/x', 'a/y', 'a/z']);
    expect(ns.map((l) => l.event.object.metadata.name)).toEqual(['y', 'z']);
    nsWatch.abort();
    allWatch.abort();
  });

  it('watches a single object through the legacy item paths; sendInitialEvents=false starts from now', async () => {
    api = await case2();
    const item = openWatch(api, `${BASE}/cm-2?watch=true&resourceVersion=693`);
    const legacy = openWatch(api, '/api/v1/watch/namespaces/fixtures/configmaps/cm-3?resourceVersion=693');
    const fromNow = openWatch(api, `${BASE}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    await Promise.all([item.ready, legacy.ready, fromNow.ready]);
    for (const n of [1, 2, 3]) api.patch(CM, 'fixtures', `cm-${n}`, { data: { key: 'new' } });
    expect((await item.waitLines(1))[0]!.event.object.metadata.name).toBe('cm-2');
    expect((await legacy.waitLines(1))[0]!.event.object.metadata.name).toBe('cm-3');
    expect((await fromNow.waitLines(3)).map((l) => l.event.object.metadata.name)).toEqual(['cm-1', 'cm-2', 'cm-3']);
    // Each object changed once more: the item watches write in order, so anything of another object would come before.
    for (const n of [1, 2, 3]) api.patch(CM, 'fixtures', `cm-${n}`, { data: { key: 'newer' } });
    expect((await item.waitLines(2)).map((l) => [l.event.object.metadata.name, l.event.object.data.key])).toEqual([
      ['cm-2', 'new'],
      ['cm-2', 'newer'],
    ]);
    expect((await legacy.waitLines(2)).map((l) => [l.event.object.metadata.name, l.event.object.data.key])).toEqual([
      ['cm-3', 'new'],
      ['cm-3', 'newer'],
    ]);
    for (const w of [item, legacy, fromNow]) w.abort();
  });

  it('waits for a future resourceVersion', async () => {
    api = await case2();
    const w = openWatch(api, `${BASE}?watch=true&resourceVersion=695`);
    await w.ready;
    api.patch(CM, 'fixtures', 'cm-1', { data: { v: '694' } });
    api.patch(CM, 'fixtures', 'cm-1', { data: { v: '695' } });
    api.patch(CM, 'fixtures', 'cm-1', { data: { v: '696' } });
    const first = await w.waitLines(1);
    // One change more: the watch writes in order, so a 694 or 695 would have come before 697.
    api.patch(CM, 'fixtures', 'cm-1', { data: { v: '697' } });
    const lines = await w.waitLines(2);
    w.abort();
    expect(first.map((l) => l.event.object.metadata.resourceVersion)).toEqual(['696']);
    expect(lines.map((l) => l.event.object.metadata.resourceVersion)).toEqual(['696', '697']);
  });

  it('answers a compacted RV with HTTP 200 and exactly the ERROR line of 04a, then ends', async () => {
    api = await startApiServer({ startResourceVersion: 133, namespaces: ['fixtures'] });
    api.create(CM, { metadata: { name: 'a', namespace: 'fixtures' } }); // 135
    api.create(CM, { metadata: { name: 'b', namespace: 'fixtures' } }); // 136
    api.compact(136); // etcd keeps revision 136: watches from 135 on still replay it (04k), so 04a's floor is 135
    // timeoutSeconds of an hour: a watch that waited for it instead of ending after the ERROR line would run into the test's timeout
    const r = await watchAll(api, `${BASE}?watch=true&allowWatchBookmarks=true&resourceVersion=1&timeoutSeconds=3600`);
    expect(r.status).toBe(200);
    expect(r.how).toBe('end');
    expect(`${r.lines.map((l) => l.text).join('\n')}\n`).toBe(fixtureText('04a', 'ndjson'));
    expect(api.requests.at(-1)).toMatchObject({ watch: true, status: 200, ended: 'expired' });
    // from the revision below the compaction it still works (replay of 136)
    const ok = await watchAll(api, `${BASE}?watch=true&resourceVersion=135&timeoutSeconds=0.05`);
    expect(ok.lines.map((l) => l.event.object.metadata.name)).toEqual(['b']);
  });

  it('a watch from the revision below an etcd compaction replays the event at the compaction revision, as 04k (200, no ERROR)', async () => {
    api = await startApiServer({ startResourceVersion: 598, namespaces: ['fixtures'] });
    api.create(CM, { metadata: { name: 'cm-churn', namespace: 'fixtures', labels: { app: 'churn' } } });
    // Other writes up to revision 601, as the recording had.
    for (let i = 0; Number(api.create(CM, { metadata: { name: `x${i}`, namespace: 'fixtures' } }).metadata!.resourceVersion) < 601; i++);
    const changed = api.patch(CM, 'fixtures', 'cm-churn', { data: { v: 'changed' } });
    expect(changed.metadata!.resourceVersion).toBe('602');
    api.compact(602);
    const query = 'watch=true&resourceVersion=601&allowWatchBookmarks=true&timeoutSeconds=0.2&fieldSelector=metadata.name%3Dcm-churn';
    const r = await watchAll(api, `${BASE}?${query}`);
    expect(r.status).toBe(200);
    const recorded = fixtureText('04k', 'ndjson')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; object: { metadata: { resourceVersion: string } } })
      .map((e) => [e.type, e.object.metadata.resourceVersion]);
    // (The emulator may close the watch at its timeout with a bookmark; the recording, at 3 s, ended before one.)
    const received = r.lines.filter((l) => l.event.type !== 'BOOKMARK');
    expect(received.map((l) => [l.event.type, l.event.object.metadata.resourceVersion])).toEqual(recorded);
  });

  it('evicts history beyond historyLimit events per resource', async () => {
    api = await startApiServer({ historyLimit: 3 });
    const first = api.create(CM, { metadata: { name: 'a', namespace: 'default' } }); // 3 (namespace at 2)
    for (let i = 0; i < 5; i++) api.patch(CM, 'default', 'a', { data: { i: String(i) } }); // 4..8
    const tooOld = await watchAll(
      api,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${first.metadata!.resourceVersion}&timeoutSeconds=1`,
    );
    expect(tooOld.lines).toHaveLength(1);
    expect(tooOld.lines[0]!.event.object.message).toBe('too old resource version: 3 (5)');
    const replay = await watchAll(api, '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=5&timeoutSeconds=0.05');
    expect(replay.lines.map((l) => l.event.object.metadata.resourceVersion)).toEqual(['6', '7', '8']);
    // the namespaces resource kept its own (short) history
    const nsReplay = await watchAll(api, '/api/v1/namespaces?watch=true&resourceVersion=1&timeoutSeconds=0.05');
    expect(nsReplay.lines.map((l) => l.event.object.metadata.name)).toEqual(['default']);
  });

  it('streams the initial state then an initial-events-end bookmark for sendInitialEvents=true', async () => {
    api = await case2({ bookmarkIntervalMs: 1000 });
    const w = openWatch(
      api,
      `${BASE}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Da`,
    );
    const lines = await w.waitLines(4);
    expect(lines.slice(0, 3).map((l) => [l.event.type, l.event.object.metadata.name])).toEqual([
      ['ADDED', 'cm-1'],
      ['ADDED', 'cm-3'],
      ['ADDED', 'cm-5'],
    ]);
    expect(lines[3]!.text).toBe(
      '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"693","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}',
    );
    api.patch(CM, 'fixtures', 'cm-1', { data: { key: 'live' } });
    const more = await w.waitLines(5);
    expect(more[4]!.event).toMatchObject({ type: 'MODIFIED', object: { data: { key: 'live' } } });
    w.abort();
    const missingBookmarks = await call(api, 'GET', `${BASE}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
    expect(missingBookmarks.status).toBe(422);
    const rvMatchOnly = await call(api, 'GET', `${BASE}?watch=true&resourceVersion=1&resourceVersionMatch=NotOlderThan`);
    expect(rvMatchOnly.status).toBe(422);
  });

  it('acts like v1.20 with sendInitialEvents:false: 422 exactly as 05a/05b; sendInitialEvents alone is ignored (05c, 05d)', async () => {
    api = await case2({ sendInitialEvents: false });
    for (const id of ['05a', '05b']) {
      const f = fixture(id);
      const path = f.request.path.replace('resourceVersion=394', 'resourceVersion=693');
      const r = await call(api, 'GET', path);
      expect(r.status).toBe(422);
      expect(r.raw).toBe(`${JSON.stringify(f.response.body)}\n`);
      expect(r.headers['content-length']).toBe(String(f.response.bodyBytes));
    }
    const plain = await watchAll(
      api,
      `${BASE}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersion=693&timeoutSeconds=0.05`,
    );
    expect(plain.lines).toEqual([]);
    const unset = await watchAll(api, `${BASE}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=0.05`);
    expect(unset.lines.map((l) => l.event.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED', 'ADDED']);
  });

  it('rejects a malformed resourceVersion with 500 exactly as 06f', async () => {
    api = await case2();
    const f = fixture('06f');
    const r = await call(api, 'GET', f.request.path);
    expect(r.status).toBe(500);
    expect(r.raw).toBe(`${JSON.stringify(f.response.body)}\n`);
  });

  it('replays 20 000 events of history to a watcher in order without loss, and keeps up with live writes', async () => {
    // How fast is a claim for bench/micro/emulator.ts (node --conditions=rx-informer-source bench/micro/emulator.ts), not for a test.
    api = await startApiServer({ historyLimit: 50_000 });
    const cm = api.create(CM, { metadata: { name: 'hot', namespace: 'default' }, data: { n: '0' } });
    const N = 20_000;
    for (let i = 1; i <= N; i++) api.update(CM, { metadata: { name: 'hot', namespace: 'default' }, data: { n: String(i) } });
    // replay of the history from the first revision
    const w = openWatch(api, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${cm.metadata!.resourceVersion}`);
    const lines = await w.waitLines(N, 25_000);
    w.abort();
    expect(lines).toHaveLength(N);
    expect(lines.every((l, i) => l.event.type === 'MODIFIED' && l.event.object.data.n === String(i + 1))).toBe(true);

    // live: every write reaches an open watch, in order
    const live = openWatch(api, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${api.resourceVersion}`);
    await live.ready;
    const M = 5000;
    for (let i = 1; i <= M; i++) {
      api.update(CM, { metadata: { name: 'hot', namespace: 'default' }, data: { n: `live-${i}` } });
      if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
    }
    const got = await live.waitLines(M, 25_000);
    live.abort();
    expect(got.map((l) => l.event.object.data.n)).toEqual(Array.from({ length: M }, (_, i) => `live-${i + 1}`));
  });
});
