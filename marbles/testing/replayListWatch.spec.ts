import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { replayListWatch } from '../../src/testing/replayListWatch.ts';
import { TRACE_FORMAT_VERSION } from '../../src/1-transport/trace/format.ts';
import { InformerError } from '../../src/0-model/errors.ts';
import { httpFailure, listPage, watchEvent } from '../../src/testing/index.ts';
import { ConfigMap, Deployment, Pod, informer, type KubeObject, type Resource } from '../../src/index.ts';

const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
/** A listed pod as the replay gives it: a built-in list's items get their apiVersion and kind, as the informer gives them. */
const listedPod = (name: string, rv: string) => ({ apiVersion: 'v1', kind: 'Pod', ...pod(name, rv) });
const header = {
  type: 'header',
  format: 'rx-informer-trace',
  version: TRACE_FORMAT_VERSION,
  startedAt: '2026-01-01T00:00:00.000Z',
  resources: ['pods'],
  redacted: true,
};
const text = (...records: readonly unknown[]) => [header, ...records].map((r) => `${JSON.stringify(r)}\n`).join('');

/** A list at 100 ms answered 20 ms later; a watch at 200 ms with two events, a notice, then a 500 at 290 ms. */
const TRACE = text(
  { type: 'list', at: 100, id: 0, options: { resourceVersion: '0', limit: 500 } },
  { type: 'page', at: 120, id: 0, resourceVersion: '10', items: [pod('a', '9')] },
  { type: 'end', at: 120, id: 0, how: 'complete' },
  { type: 'watch', at: 200, id: 1, options: { resourceVersion: '10', allowWatchBookmarks: true } },
  { type: 'event', at: 230, id: 1, event: { type: 'ADDED', object: pod('b', '11') } },
  { type: 'event', at: 230, id: 1, event: { type: 'MODIFIED', object: pod('b', '12') } },
  { type: 'notice', at: 250, id: 1, error: { reason: 'MalformedLine', message: 'bad line', phase: 'watch' } },
  { type: 'failure', at: 290, id: 1, error: { reason: 'ServerError', message: 'HTTP 500', status: 500, phase: 'watch' } },
  { type: 'stop', at: 300, why: 'closed' },
);

describe('replayListWatch', () => {
  it('answers each request with what was recorded, at its offsets from the request', () => {
    testScheduler().run(({ expectObservable, flush }) => {
      const replay = replayListWatch(TRACE);
      expectObservable(replay.list({ resourceVersion: '0', limit: 500 })).toBe('20ms (p|)', { p: listPage('10', [listedPod('a', '9')]) });
      // Its faults name the replayed request, as the live transport's name theirs (`watch /api/v1/pods`).
      const request = 'watch pods (trace line 5)';
      const malformed = new InformerError('MalformedLine', 'bad line', { phase: 'watch', request });
      // Subscribed at 50 ms: its lines at 50 + 30, 50 + 50 and 50 + 90 ms.
      expectObservable(replay.watch({ allowWatchBookmarks: true, resourceVersion: '10' }), '50ms ^').toBe(
        '80ms (am) 16ms n 39ms #',
        { a: watchEvent('ADDED', pod('b', '11')), m: watchEvent('MODIFIED', pod('b', '12')), n: malformed },
        httpFailure(500).forRequest(request),
      );
      expectObservable(replay.finished$).toBe('140ms (f|)', { f: undefined });
      flush();
      expect(replay.remaining).toBe(0);
      expect(replay.mismatches).toEqual([]);
    });
  });

  it('a request the trace cannot answer fails naming it and the nearest recorded one; later ones hang', () => {
    testScheduler().run(({ expectObservable, flush }) => {
      const replay = replayListWatch(TRACE);
      expectObservable(replay.watch({ resourceVersion: '10', allowWatchBookmarks: true })).toBe('#', undefined, expect.any(InformerError));
      flush();
      expect(replay.mismatches[0]?.message).toBe(
        'replay: the informer\'s request #1, watch {"allowWatchBookmarks":true,"resourceVersion":"10"}, is not in the trace ' +
          '(the trace\'s request #1 is list {"limit":500,"resourceVersion":"0"}, line 2); the nearest recorded one is ' +
          'watch {"allowWatchBookmarks":true,"resourceVersion":"10"} (line 5, after 1 other request(s) the informer did not make)',
      );
      expectObservable(replay.list({ resourceVersion: '0', limit: 500 })).toBe('-');
    });
  });

  it('a resume at a resourceVersion the trace has no window for names the recorded one', () => {
    testScheduler().run(({ flush }) => {
      const replay = replayListWatch(TRACE);
      replay.list({ resourceVersion: '0', limit: 500 }).subscribe();
      flush();
      replay.watch({ resourceVersion: '7', allowWatchBookmarks: true }).subscribe({ error: () => undefined });
      expect(replay.mismatches[0]?.message).toMatch(
        /request #2, watch \{"allowWatchBookmarks":true,"resourceVersion":"7"\}, is not in the trace .*the nearest recorded one is watch \{"allowWatchBookmarks":true,"resourceVersion":"10"\} \(line 5\)$/,
      );
    });
  });

  it('a watch’s timeoutSeconds (the informer’s jitter) need not match: the trace says when the server ended it', () => {
    testScheduler().run(({ flush }) => {
      const replay = replayListWatch(TRACE);
      replay.list({ resourceVersion: '0', limit: 500 }).subscribe();
      flush();
      replay.watch({ resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 417 }).subscribe({ error: () => undefined });
      flush();
      expect(replay.mismatches).toEqual([]);
      expect(replay.remaining).toBe(0);
    });
  });

  it('an informer that aborts a request before the recorded client did is a divergence: what was left is named', () => {
    testScheduler().run(({ expectObservable, flush }) => {
      const replay = replayListWatch(TRACE);
      replay.list({ resourceVersion: '0', limit: 500 }).subscribe();
      flush();
      expectObservable(replay.watch({ resourceVersion: '10', allowWatchBookmarks: true }), '^ 20ms !').toBe('-');
      expectObservable(replay.finished$).toBe('-');
      flush();
      expect(replay.mismatches.map((m) => m.message)).toEqual([
        'replay: the informer aborted its request #2, watch {"allowWatchBookmarks":true,"resourceVersion":"10"} (line 5), ' +
          '21 ms after it, before line 6 (its event 30 ms after it): the recorded client did not abort it there',
      ]);
    });
  });

  it('timeline: recorded: nothing comes before its recorded time, however soon the informer asks', () => {
    testScheduler().run(({ expectObservable }) => {
      const replay = replayListWatch(TRACE, { timeline: 'recorded' });
      // Asked at 0 ms (recorded at 100): the page at its recorded 120 ms, not at 20.
      expectObservable(replay.list({ resourceVersion: '0', limit: 500 })).toBe('120ms (p|)', { p: listPage('10', [listedPod('a', '9')]) });
    });
  });

  it('an ERROR event carries the replayed request, so the informer’s error names it as in production', () => {
    const expired = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old' };
    const trace = text(
      { type: 'list', at: 0, id: 0, options: { resourceVersion: '0', limit: 500 } },
      { type: 'page', at: 10, id: 0, resourceVersion: '10', items: [] },
      { type: 'end', at: 10, id: 0, how: 'complete' },
      { type: 'watch', at: 20, id: 1, options: { resourceVersion: '10', allowWatchBookmarks: true } },
      { type: 'event', at: 30, id: 1, event: { type: 'ERROR', object: expired } },
      { type: 'end', at: 30, id: 1, how: 'complete' },
      { type: 'stop', at: 40, why: 'closed' },
    );
    testScheduler().run(({ expectObservable, flush }) => {
      const replay = replayListWatch(trace);
      replay.list({ resourceVersion: '0', limit: 500 }).subscribe();
      flush();
      // The watch asked at 10 ms (after the list), its ERROR 10 ms after it, as recorded.
      expectObservable(replay.watch({ resourceVersion: '10', allowWatchBookmarks: true })).toBe('20ms (e|)', {
        e: { type: 'ERROR', object: expired, request: 'watch pods (trace line 5)' },
      });
    });
    const scheduler = testScheduler();
    const errors: InformerError[] = [];
    scheduler.run(() => {
      const replay = replayListWatch(trace, { scheduler });
      const pods = informer(replay, Pod, { scheduler });
      const subscription = pods.errors$.subscribe((e) => errors.push(e));
      subscription.add(pods.events$.subscribe());
      scheduler.schedule(() => subscription.unsubscribe(), 35);
    });
    expect(errors.map((e) => [e.reason, e.request])).toEqual([['Expired', 'watch pods (trace line 5)']]);
  });

  it('a trace of several resources needs the resource option', () => {
    const two = text().replace('["pods"]', '["pods","secrets"]');
    expect(() => replayListWatch(two)).toThrow(/holds pods, secrets: say which with the resource option/);
    expect(() => replayListWatch(two, { resource: 'nodes' })).toThrow(/not nodes/);
  });

  describe("another resource's trace", () => {
    const configMap = (name: string, rv: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', ...pod(name, rv) });
    /** A ConfigMaps trace: its list items carry no kind (as the server sends them), its watch events do. */
    const CONFIGMAPS = text(
      { type: 'list', at: 0, id: 0, options: { resourceVersion: '0', limit: 500 } },
      { type: 'page', at: 5, id: 0, resourceVersion: '10', items: [pod('settings', '9'), pod('flags', '8')] },
      { type: 'end', at: 5, id: 0, how: 'complete' },
      { type: 'watch', at: 10, id: 1, options: { resourceVersion: '10', allowWatchBookmarks: true } },
      { type: 'event', at: 20, id: 1, event: { type: 'ADDED', object: configMap('more', '11') } },
    ).replace('["pods"]', '["configmaps"]');

    /** What an informer of `resource` over the replayed trace reports and caches in its first 50 ms. */
    function replayed<T extends KubeObject>(resource: Resource<T>): { errors: string[]; keys: string[] } {
      const scheduler = testScheduler();
      const errors: string[] = [];
      let keys: string[] = [];
      scheduler.run(() => {
        const replay = replayListWatch(CONFIGMAPS, { scheduler });
        const watched = informer(replay, resource, { scheduler });
        const subscription = watched.errors$.subscribe((e) => errors.push(`${e.reason} ${e.message}`));
        subscription.add(watched.store$.subscribe((store) => (keys = store.keys().sort())));
        scheduler.schedule(() => subscription.unsubscribe(), 50);
      });
      return { errors, keys };
    }

    it('into an informer of another resource: each listed object is reported as of the recorded kind, and not cached', () => {
      expect(replayed(Deployment)).toEqual({
        errors: [
          'ValidationFailed default/settings is a v1 ConfigMap, not an apps/v1 Deployment; skipped',
          'ValidationFailed default/flags is a v1 ConfigMap, not an apps/v1 Deployment; skipped',
          'ValidationFailed default/more is a v1 ConfigMap, not an apps/v1 Deployment; skipped',
        ],
        keys: [],
      });
    });

    it("into an informer of the trace's resource: everything cached, nothing reported", () => {
      expect(replayed(ConfigMap)).toEqual({ errors: [], keys: ['default/flags', 'default/more', 'default/settings'] });
    });
  });
});
