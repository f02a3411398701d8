/**
 * A trace recorded from a real API server's answers replays: the kube-apiserver v1.20 transcripts in
 * spec/fixtures (03a: the list, 03b: the watch from its resourceVersion with bookmarks, ended by the
 * server at its timeout) served byte for byte on 127.0.0.1, an informer recorded over HTTP, and the trace
 * replayed under a TestScheduler: the same events, the same store, and the server's frames in the trace.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { ConfigMap, informer, type InformerEvent, type KubeObject, type Store } from '../../src/index.ts';
import { httpListWatch, readTrace, record, traceWriter } from '../../src/pipeline.ts';
import { replayListWatch } from '../../src/testing/index.ts';
import { hostileServer, type HostileServer } from './hostile/server.ts';
import { until } from './harness/probes.ts';

const FIXTURES = new URL('../fixtures/kube-apiserver-v1.20/', import.meta.url);
const list = (JSON.parse(readFileSync(new URL('03a-list-before-watch.json', FIXTURES), 'utf8')) as { response: { body: unknown } }).response
  .body;
const watchLines = readFileSync(new URL('03b-watch-configmaps-bookmarks-timeout75.ndjson', FIXTURES), 'utf8').split('\n').filter(Boolean);

const describeEvent = (e: InformerEvent<KubeObject>) =>
  `${e.type} ${e.object.metadata.name ?? ''}@${e.object.metadata.resourceVersion ?? ''}${e.type === 'deleted' && e.finalStateUnknown ? ' unknown' : ''}`;
const storeOf = (store: Store<KubeObject> | undefined) =>
  (store?.list() ?? []).map((o) => `${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}`).sort();

let server: HostileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a trace recorded from kube-apiserver v1.20 answers', () => {
  it('replays: same events, same store, the server’s frames as sent', async () => {
    let watches = 0;
    server = await hostileServer({
      list: (_request, response) => {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(list));
      },
      // The first watch: the transcript, then the server's clean end at its timeout. The next one stays open.
      watch: (_request, response) => {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.flushHeaders();
        if (++watches > 1) return;
        for (const line of watchLines) response.write(`${line}\n`);
        response.end();
      },
    });
    let text = '';
    const writer = traceWriter({ write: (line) => (text += line), resources: ['configmaps'], server: 'v1.20.0' });
    const live: string[] = [];
    let liveStore: Store<KubeObject> | undefined;
    const cache = informer(record(httpListWatch(server.kc, { resource: ConfigMap, namespace: 'fixtures' }), writer), ConfigMap, {
      namespace: 'fixtures',
    });
    const subscription = cache.events$.subscribe((e) => live.push(describeEvent(e)));
    subscription.add(cache.store$.subscribe((s) => (liveStore = s)));
    expect(await until(() => server!.received.watch >= 2, 10_000)).toBe(true);
    subscription.unsubscribe();
    writer.close();

    const trace = readTrace(text);
    const frames = trace.lines.flatMap((l) => (l.type === 'event' && l.id === 1 ? [l.event] : []));
    expect(frames).toEqual(watchLines.map((line) => JSON.parse(line) as unknown));

    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const replayed: string[] = [];
    let replayedStore: Store<KubeObject> | undefined;
    scheduler.run(() => {
      const replay = replayListWatch(trace, { scheduler });
      const again = informer(replay, ConfigMap, { namespace: 'fixtures', scheduler });
      const s = again.events$.subscribe((e) => replayed.push(describeEvent(e)));
      s.add(again.store$.subscribe((st) => (replayedStore = st)));
      s.add(replay.finished$.subscribe(() => s.unsubscribe()));
    });
    expect(live.length).toBeGreaterThan(3);
    expect(replayed).toEqual(live);
    expect(storeOf(replayedStore)).toEqual(storeOf(liveStore));
  }, 30_000);
});
