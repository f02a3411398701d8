import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FAULT_KINDS, FAULT_TYPES, isWatchFault, startApiServer, type ApiServer, type Fault } from 'rx-informer-emulator';
import { call, openWatch, sleep, watchAll } from './helpers.ts';
import { until } from '../resilience/realClock.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const CM = { group: '', version: 'v1', resource: 'configmaps' } as const;
const LIST = '/api/v1/namespaces/default/configmaps';

async function seeded(opts: Parameters<typeof startApiServer>[0] = {}): Promise<ApiServer> {
  const s = await startApiServer(opts);
  for (const n of ['a', 'b', 'c']) s.create(CM, { metadata: { name: n, namespace: 'default' }, data: { n } });
  return s;
}

describe('request faults', () => {
  it('replies 500 / 503 with Status bodies, then lets requests through', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'status', code: 500 } });
    api.faults.add({ match: { method: 'GET' }, fault: { type: 'status', code: 503 } });
    const r1 = await call(api, 'GET', LIST);
    expect(r1.status).toBe(500);
    expect(r1.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500 });
    const r2 = await call(api, 'GET', LIST);
    expect(r2.status).toBe(503);
    expect(r2.body).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable', code: 503 });
    const r3 = await call(api, 'GET', LIST);
    expect(r3.status).toBe(200);
    expect(api.requests.map((r) => [r.status, r.fault])).toEqual([
      [500, 'status'],
      [503, 'status'],
      [200, undefined],
    ]);
    expect(api.faults.pending).toBe(0);
  });

  it('replies 429 with Retry-After, for `times` requests', async () => {
    api = await seeded();
    const h = api.faults.add({ times: 2, fault: { type: 'status', code: 429, retryAfterSeconds: 3 } });
    for (let i = 0; i < 2; i++) {
      const r = await call(api, 'GET', LIST);
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('3');
      expect(r.body).toMatchObject({ reason: 'TooManyRequests', details: { retryAfterSeconds: 3 }, code: 429 });
    }
    expect(h.hits).toBe(2);
    expect(h.active).toBe(false);
    expect((await call(api, 'GET', LIST)).status).toBe(200);
  });

  it('matches on method, resource, namespace, watch, and skips the first matches when asked', async () => {
    api = await seeded();
    api.faults.add({ match: { method: 'POST', resource: 'configmaps', namespace: 'other' }, fault: { type: 'status', code: 503 } });
    api.faults.add({ match: { resource: 'pods', watch: false }, skip: 1, fault: { type: 'status', code: 500 } });
    expect((await call(api, 'POST', LIST, { metadata: { name: 'x' } })).status).toBe(201);
    expect((await call(api, 'POST', '/api/v1/namespaces/other/configmaps', { metadata: { name: 'x' } })).status).toBe(503);
    expect((await call(api, 'GET', '/api/v1/pods')).status).toBe(200);
    expect((await call(api, 'GET', '/api/v1/pods')).status).toBe(500);
    expect((await call(api, 'GET', '/api/v1/pods')).status).toBe(200);
  });

  it('resets the connection without a response, and delays responses', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'reset' } });
    await expect(call(api, 'GET', LIST)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(api.requests.at(-1)).toMatchObject({ status: 0, fault: 'reset' });
    api.faults.add({ fault: { type: 'delay', ms: 80 } });
    const t0 = performance.now();
    expect((await call(api, 'GET', LIST)).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(75);
  });

  it('pauseBody: the first bytes, then the rest once resumed (whole), or a reset; a client that gives up is logged', async () => {
    api = await seeded();
    const whole = (await call(api, 'GET', LIST)).raw;
    let resume!: () => void;
    api.faults.add({ fault: { type: 'pauseBody', afterBytes: 40, resume: new Promise<void>((r) => (resume = r)) } });
    const { request } = await import('node:http');
    const parts: string[] = [];
    const ended = new Promise<void>((done) =>
      request(`${api!.url}${LIST}`, (res) => {
        res.on('data', (chunk: Buffer) => {
          parts.push(chunk.toString());
          if (parts.length === 1) resume(); // the first part came alone: nothing more until resumed
        });
        res.on('end', done);
      }).end(),
    );
    await ended;
    expect(parts[0]).toBe(whole.slice(0, 40));
    expect(parts.join('')).toBe(whole);
    expect(api.requests.at(-1)).toMatchObject({ status: 200, fault: 'pauseBody' });
    expect(api.requests.at(-1)!.ended).toBeUndefined();

    api.faults.add({ fault: { type: 'pauseBody', afterBytes: 40, reset: true } });
    await expect(call(api, 'GET', LIST)).rejects.toThrow(/aborted|ECONNRESET|hang up/);
    expect(api.requests.at(-1)).toMatchObject({ fault: 'pauseBody', ended: 'fault' });

    api.faults.add({ fault: { type: 'pauseBody', afterBytes: 40 } });
    const given = request(`${api.url}${LIST}`, (res) => res.once('data', () => given.destroy()));
    given.on('error', () => undefined).end();
    await until('the client gave up', () => api!.requests.at(-1)?.ended === 'client');
  });

  it('runs a schedule: the n-th matching request gets the n-th fault', async () => {
    api = await seeded();
    const h = api.faults.schedule({ method: 'GET' }, [null, { type: 'status', code: 503 }, null, { type: 'status', code: 500 }]);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(api, 'GET', LIST)).status);
    expect(statuses).toEqual([200, 503, 200, 500, 200, 200]);
    expect(h.hits).toBe(2);
  });
});

describe('watch faults', () => {
  const WATCH = `${LIST}?watch=true&resourceVersion=0`;

  it('dropWatch after N events: the lines before arrive, then the connection closes without the terminating chunk', async () => {
    api = await seeded();
    const h = api.faults.add({ fault: { type: 'dropWatch', afterEvents: 2 } });
    const listed = await call(api, 'GET', LIST); // a list is not a watch: not consumed
    expect(listed.status).toBe(200);
    const r = await watchAll(api, WATCH);
    expect(r.status).toBe(200);
    expect(r.lines.map((l) => l.event.object.metadata.name)).toEqual(['a', 'b']);
    expect(r.how).toBe('aborted');
    expect(h.hits).toBe(1);
    expect(api.requests.at(-1)).toMatchObject({ watch: true, fault: 'dropWatch', eventsSent: 2, ended: 'fault' });
  });

  it('dropWatch after T ms', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'dropWatch', afterMs: 60 } });
    const r = await watchAll(api, WATCH);
    expect(r.lines).toHaveLength(3);
    expect(r.how).toBe('aborted');
    expect(r.durationMs).toBeGreaterThanOrEqual(55);
  });

  it('stallWatch: headers, then nothing (no events, no bookmarks, no timeout) until the client aborts', async () => {
    api = await seeded({ bookmarkIntervalMs: 10 });
    api.faults.add({ fault: { type: 'stallWatch' } });
    const w = openWatch(api, `${WATCH}&allowWatchBookmarks=true&timeoutSeconds=0.05`);
    expect((await w.ready).status).toBe(200);
    // A change the stalled watch would have sent (it was open before it).
    api.patch(CM, 'default', 'a', { data: { n: 'changed' } });
    // The fault is spent: the same watch opened after it runs normally. Its timeout and bookmark timers were armed after the
    // stalled watch's would have been, so by the time it ended, the stalled watch would have had its lines and its end.
    // (Opened after the change, it lists it as ADDED: nothing here races its 50 ms timeout, however loaded the machine.)
    const control = openWatch(api, `${WATCH}&allowWatchBookmarks=true&timeoutSeconds=0.05`);
    expect((await control.ready).status).toBe(200);
    const c = await control.done;
    expect(c.how).toBe('end');
    const changes = c.lines.filter((l) => l.event.type !== 'BOOKMARK');
    expect(changes.map((l) => l.event.type)).toEqual(['ADDED', 'ADDED', 'ADDED']);
    expect(changes.find((l) => l.event.object.metadata.name === 'a')?.event.object.data).toEqual({ n: 'changed' });
    const stalled = () => api!.requests.find((r) => r.fault === 'stallWatch')!;
    expect(stalled()).toMatchObject({ eventsSent: 0, bookmarksSent: 0 });
    expect(stalled().ended).toBeUndefined();
    expect(w.lines).toEqual([]);
    expect(api.activeWatches).toBe(1);
    w.abort();
    const r = await w.done;
    expect(r.how).toBe('client');
    await vi.waitFor(() => expect(api!.activeWatches).toBe(0), { timeout: 20_000, interval: 5 });
    expect(stalled()).toMatchObject({ fault: 'stallWatch', ended: 'client' });
  });

  it('stallWatch after N events, ended by api.close()', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'stallWatch', afterEvents: 1 } });
    const w = openWatch(api, WATCH);
    await w.waitLines(1);
    // The fault is spent: a watch opened after it gets the three objects and a change, which the stalled watch got too, unwritten.
    const control = openWatch(api, WATCH);
    await control.waitLines(3);
    api.patch(CM, 'default', 'a', { data: { n: 'changed' } });
    await control.waitLines(4);
    expect(api.requests.find((r) => r.fault === 'stallWatch')).toMatchObject({ eventsSent: 1 });
    expect(w.lines).toHaveLength(1);
    await api.close();
    const r = await w.done;
    expect(r.how).toBe('end');
  });

  it('malformedLine: one line that is not JSON, then the stream carries on', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'malformedLine', afterEvents: 1 } });
    const r = await watchAll(api, `${WATCH}&timeoutSeconds=0.05`);
    expect(r.lines).toHaveLength(4);
    expect(() => JSON.parse(r.lines[1]!.text)).toThrow();
    expect(r.lines.filter((l) => l.event).map((l) => l.event.object.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(r.how).toBe('end');
  });

  it('oversizeLine: one valid JSON line of the requested size, then the stream carries on', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'oversizeLine', bytes: 1_000_000 } });
    const r = await watchAll(api, `${WATCH}&timeoutSeconds=0.1`);
    expect(r.lines).toHaveLength(4);
    const big = r.lines[0]!;
    expect(big.text.length).toBeGreaterThan(999_000);
    expect(big.text.length).toBeLessThanOrEqual(1_000_000);
    expect(big.event.type).toBe('BOOKMARK');
    expect(r.lines.slice(1).map((l) => l.event.type)).toEqual(['ADDED', 'ADDED', 'ADDED']);
  });

  it('slowWatch: the body arrives in small chunks with delays, intact', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'slowWatch', chunkBytes: 50, delayMs: 1 } });
    const r = await watchAll(api, `${WATCH}&timeoutSeconds=0.05`);
    expect(r.how).toBe('end');
    expect(r.lines.map((l) => l.event.object.metadata.name)).toEqual(['a', 'b', 'c']);
    const bytes = r.lines.reduce((n, l) => n + l.text.length + 1, 0);
    expect(r.chunks.length).toBeGreaterThanOrEqual(Math.floor(bytes / 50) - 2);
    expect(Math.max(...r.chunks)).toBeLessThanOrEqual(50);
  });

  it('closeWatch: a very short, empty watch that ends cleanly; or after N events', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'closeWatch' } });
    // timeoutSeconds of an hour: only the fault can end this watch before the test's timeout
    const r = await watchAll(api, `${WATCH}&timeoutSeconds=3600`);
    expect(r.lines).toEqual([]);
    expect(r.how).toBe('end');
    expect(api.requests.at(-1)).toMatchObject({ watch: true, fault: 'closeWatch', ended: 'fault' });
    api.faults.add({ fault: { type: 'closeWatch', afterEvents: 2 } });
    const r2 = await watchAll(api, WATCH);
    expect(r2.lines).toHaveLength(2);
    expect(r2.how).toBe('end');
  });

  it('expireWatch: an ERROR line with a 410 Expired Status, then a clean end', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'expireWatch' } });
    const r = await watchAll(api, `${LIST}?watch=true&resourceVersion=3`);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]!.event).toEqual({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'too old resource version: 3 (0)',
        reason: 'Expired',
        code: 410,
      },
    });
    expect(r.how).toBe('end');
  });

  it('lists every fault type in FAULT_TYPES', () => {
    expect([...FAULT_TYPES].sort()).toEqual(
      [
        'closeWatch',
        'delay',
        'dropWatch',
        'expireWatch',
        'malformedLine',
        'oversizeLine',
        'pauseBody',
        'reset',
        'slowWatch',
        'stallWatch',
        'status',
        'tooLargeResourceVersion',
      ].sort(),
    );
  });
});

describe('live watch faults (faults.add({ live: true, … }))', () => {
  const WATCH = `${LIST}?watch=true&resourceVersion=0`;
  /** A watch that has delivered the three seeded objects: open, and with no timeout of its own. */
  async function openSeeded(s: ApiServer, query = '') {
    const w = openWatch(s, `${WATCH}${query}`);
    await w.waitLines(3);
    return w;
  }

  it('dropWatch: a watch already open is dropped at once, without waiting for any request', async () => {
    api = await seeded();
    const w = await openSeeded(api);
    const h = api.faults.add({ live: true, match: { resource: 'configmaps' }, fault: { type: 'dropWatch' } });
    expect(h).toMatchObject({ hits: 1, active: false });
    // The watch has no timeout: only the fault can end it.
    const r = await w.done;
    expect(r.how).toBe('aborted');
    expect(r.lines).toHaveLength(3);
    expect(api.requests.at(-1)).toMatchObject({ watch: true, fault: 'dropWatch', faultId: h.id, ended: 'fault' });
    expect(api.requests.at(-1)!.faultFiredAt).toBeGreaterThanOrEqual(api.requests.at(-1)!.at);
    expect(api.faults.pending).toBe(0);
  });

  it('stallWatch: an open watch stops writing and stays open; a watch it does not match carries on', async () => {
    api = await seeded();
    const stalled = await openSeeded(api);
    const other = await openSeeded(api, '&labelSelector=x%21%3Dy'); // same resource, not matched below
    const h = api.faults.add({
      live: true,
      match: { predicate: (r) => r.query['labelSelector'] === undefined },
      fault: { type: 'stallWatch' },
    });
    expect(h.hits).toBe(1);
    api.patch(CM, 'default', 'a', { data: { n: 'changed' } });
    await other.waitLines(4);
    // The patch reached every watch when it was made (the other one wrote it): the stalled one wrote nothing of it.
    expect(api.requests.find((r) => r.faultId === h.id)).toMatchObject({ eventsSent: 3 });
    expect(stalled.lines).toHaveLength(3);
    expect(api.activeWatches).toBe(2);
    stalled.abort();
    other.abort();
    expect((await stalled.done).how).toBe('client');
  });

  it('expireWatch: an open watch gets the 410 ERROR line, then a clean end', async () => {
    api = await seeded();
    const w = await openSeeded(api);
    api.faults.add({ live: true, fault: { type: 'expireWatch' } });
    const r = await w.done;
    expect(r.how).toBe('end');
    expect(r.lines.map((l) => l.event.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ERROR']);
    expect(r.lines[3]!.event.object).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410 });
  });

  it('malformedLine: an open watch gets one line that is not JSON, then carries on', async () => {
    api = await seeded();
    const w = await openSeeded(api);
    api.faults.add({ live: true, fault: { type: 'malformedLine', line: 'not json' } });
    const lines = await w.waitLines(4);
    expect(lines[3]!.text).toBe('not json');
    api.patch(CM, 'default', 'b', { data: { n: 'after' } });
    const more = await w.waitLines(5);
    expect(more[4]!.event).toMatchObject({ type: 'MODIFIED', object: { data: { n: 'after' } } });
    w.abort();
  });

  it('closeWatch and oversizeLine on open watches', async () => {
    api = await seeded();
    const big = await openSeeded(api);
    api.faults.add({ live: true, fault: { type: 'oversizeLine', bytes: 100_000 } });
    const lines = await big.waitLines(4);
    expect(lines[3]!.event.type).toBe('BOOKMARK');
    expect(lines[3]!.text.length).toBeGreaterThan(99_000);
    api.faults.add({ live: true, fault: { type: 'closeWatch' } });
    expect((await big.done).how).toBe('end');
  });

  it('counts afterEvents from the moment it is injected, and reaches every matching open watch', async () => {
    api = await seeded();
    const w1 = await openSeeded(api);
    const w2 = await openSeeded(api);
    const h = api.faults.add({ live: true, fault: { type: 'dropWatch', afterEvents: 2 } });
    expect(h.hits).toBe(2);
    for (const n of ['a', 'b', 'c']) api.patch(CM, 'default', n, { data: { n: `${n}2` } });
    for (const w of [w1, w2]) {
      const r = await w.done;
      expect(r.how).toBe('aborted');
      expect(r.lines.map((l) => l.event.object.metadata.name)).toEqual(['a', 'b', 'c', 'a', 'b']);
    }
    expect(api.requests.filter((r) => r.watch).map((r) => [r.fault, r.eventsSent, r.ended])).toEqual([
      ['dropWatch', 5, 'fault'],
      ['dropWatch', 5, 'fault'],
    ]);
  });

  it('slowWatch: the rest of an open watch trickles out in small chunks, intact', async () => {
    api = await seeded();
    const w = await openSeeded(api, '&timeoutSeconds=0.2');
    const before = w.chunks.length;
    api.faults.add({ live: true, fault: { type: 'slowWatch', chunkBytes: 40, delayMs: 1 } });
    api.patch(CM, 'default', 'a', { data: { n: 'slow' } });
    const r = await w.done;
    expect(r.how).toBe('end');
    expect(r.lines.map((l) => l.event.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'MODIFIED']);
    const after = r.chunks.slice(before);
    expect(Math.max(...after)).toBeLessThanOrEqual(40);
    expect(after.length).toBeGreaterThanOrEqual(Math.floor(r.lines[3]!.text.length / 40));
  });

  it('with no matching watch open, waits for the next matching watch request', async () => {
    api = await seeded();
    const h = api.faults.add({ live: true, match: { resource: 'configmaps' }, fault: { type: 'closeWatch' } });
    expect(h).toMatchObject({ hits: 0, active: true });
    expect((await call(api, 'GET', LIST)).status).toBe(200); // a list does not take a watch fault
    const r = await watchAll(api, WATCH);
    expect(r).toMatchObject({ how: 'end', lines: [] });
    expect(h).toMatchObject({ hits: 1, active: false });
  });

  it('is refused by the compiler for a request fault', () => {
    // @ts-expect-error a live rule takes watch faults only
    const rule: Parameters<ApiServer['faults']['add']>[0] = { live: true, fault: { type: 'status', code: 500 } };
    expect(rule.live).toBe(true);
  });
});

describe('too large resource version', () => {
  const tooLarge = (requested: number, current: number) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `Timeout: Too large resource version: ${requested}, current: ${current}`,
    reason: 'Timeout',
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    code: 504,
  });

  it("a list at a resourceVersion the server has not reached: 504 with kube-apiserver's Status, key order included", async () => {
    api = await seeded();
    const current = api.revision;
    const r = await call(api, 'GET', `${LIST}?resourceVersion=${current + 10}`);
    expect(r.status).toBe(504);
    expect(r.raw).toBe(`${JSON.stringify(tooLarge(current + 10, current))}\n`);
  });

  it('a streaming list at a resourceVersion not reached: HTTP 200 and one ERROR line with that Status', async () => {
    api = await seeded();
    const current = api.revision;
    const r = await watchAll(
      api,
      `${LIST}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${current + 1}`,
    );
    expect(r.status).toBe(200);
    expect(r.how).toBe('end');
    expect(r.lines.map((l) => l.event)).toEqual([{ type: 'ERROR', object: tooLarge(current + 1, current) }]);
    expect(api.requests.at(-1)).toMatchObject({ watch: true, ended: 'error' });
  });

  it('the tooLargeResourceVersion fault: taken by lists and streaming lists at a resourceVersion, not by others', async () => {
    api = await seeded();
    const rv = api.revision;
    api.faults.add({ times: 2, fault: { type: 'tooLargeResourceVersion' } });
    expect((await call(api, 'GET', LIST)).status).toBe(200); // no resourceVersion
    expect((await call(api, 'GET', `${LIST}?resourceVersion=0`)).status).toBe(200); // "any"
    expect((await watchAll(api, `${LIST}?watch=true&resourceVersion=${rv}&timeoutSeconds=0.01`)).status).toBe(200); // a plain watch waits instead
    expect(api.requests.map((r) => r.fault)).toEqual([undefined, undefined, undefined]);
    const listed = await call(api, 'GET', `${LIST}?resourceVersion=${rv}&limit=2`);
    expect(listed.status).toBe(504);
    expect(listed.body).toEqual(tooLarge(rv, rv - 1));
    const streamed = await watchAll(
      api,
      `${LIST}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}`,
    );
    expect(streamed.lines.map((l) => l.event)).toEqual([{ type: 'ERROR', object: tooLarge(rv, rv - 1) }]);
    expect(api.requests.slice(-2).map((r) => [r.fault, r.status, r.ended])).toEqual([
      ['tooLargeResourceVersion', 504, undefined],
      ['tooLargeResourceVersion', 200, 'fault'],
    ]);
    api.faults.add({ fault: { type: 'tooLargeResourceVersion', current: 3 } });
    expect((await call(api, 'GET', `${LIST}?resourceVersion=${rv}`)).body).toEqual(tooLarge(rv, 3));
  });
});

describe('the fault table', () => {
  it('sends every watch fault to watches only, and says so through isWatchFault', () => {
    const info = (watch: boolean) => ({ method: 'GET', path: LIST, query: {}, watch, resource: 'configmaps' });
    for (const type of FAULT_TYPES) {
      const kind = FAULT_KINDS[type];
      if (kind.target === 'watch') {
        expect([type, kind.takes(info(true)), kind.takes(info(false))]).toEqual([type, true, false]);
      }
      expect(isWatchFault({ type } as Fault)).toBe(kind.target === 'watch');
    }
  });
});

describe('random fault schedules (property)', () => {
  const faultArb: fc.Arbitrary<Fault> = fc.oneof(
    fc.constantFrom(500, 503, 429).map((code) => ({ type: 'status', code }) as Fault),
    fc.constant({ type: 'reset' } as Fault),
    fc.integer({ min: 0, max: 15 }).map((ms) => ({ type: 'delay', ms }) as Fault),
    fc.integer({ min: 0, max: 3 }).map((n) => ({ type: 'dropWatch', afterEvents: n }) as Fault),
    fc.constant({ type: 'stallWatch' } as Fault),
    fc.integer({ min: 0, max: 3 }).map((n) => ({ type: 'malformedLine', afterEvents: n }) as Fault),
    fc.constant({ type: 'oversizeLine', bytes: 4096 } as Fault),
    fc.integer({ min: 0, max: 3 }).map((n) => ({ type: 'closeWatch', afterEvents: n }) as Fault),
    fc.constant({ type: 'expireWatch' } as Fault),
    fc.constant({ type: 'slowWatch', chunkBytes: 256, delayMs: 1 } as Fault),
    fc.constant({ type: 'tooLargeResourceVersion' } as Fault),
  );

  it('applies exactly the scheduled fault to each request, logs it, and stays healthy', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(faultArb, { nil: null }), { maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        async (schedule, requests) => {
          const s = await seeded();
          try {
            s.faults.schedule(undefined, schedule);
            // Model: a watch fault never consumes a list, tooLargeResourceVersion never a plain watch (the lists
            // here are at a resourceVersion); anything else takes the next entry.
            const takes = (f: Fault | null | undefined, isWatch: boolean): boolean =>
              !f || (f.type === 'tooLargeResourceVersion' ? !isWatch : isWatchFault(f) ? isWatch : true);
            let next = 0;
            const expected: (string | undefined)[] = [];
            for (const isWatch of requests) {
              const candidate = schedule[next];
              if (next < schedule.length && takes(candidate, isWatch)) {
                next++;
                expected.push(candidate?.type);
              } else expected.push(undefined);
            }
            for (const isWatch of requests) {
              if (isWatch) {
                const logged = s.requests.length + 1;
                const w = openWatch(s, `${LIST}?watch=true&resourceVersion=0&timeoutSeconds=0.03`);
                // A stalled watch never ends by itself: abort it, but only once the server logged it (what is asserted below);
                // a stopwatch started with the request could abort it before a loaded server got to it.
                let t: ReturnType<typeof setTimeout> | undefined;
                const armed = vi.waitFor(() => expect(s.requests.length).toBeGreaterThanOrEqual(logged), { timeout: 20_000, interval: 2 });
                void armed.then(
                  () => (t = setTimeout(() => w.abort(), 150)),
                  () => w.abort(),
                );
                await w.done;
                await armed.catch(() => undefined);
                clearTimeout(t);
              } else {
                await call(s, 'GET', `${LIST}?resourceVersion=${s.revision}`).catch(() => undefined);
              }
            }
            expect(s.requests.map((r) => r.fault)).toEqual(expected);
            expect(s.requests.map((r) => r.watch)).toEqual(requests);
            s.faults.clear(); // whatever is left of the schedule
            const healthy = await call(s, 'GET', LIST);
            expect(healthy.body.items).toHaveLength(3);
          } finally {
            await s.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
