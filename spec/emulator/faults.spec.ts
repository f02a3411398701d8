import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { isWatchFault } from '../../src/testing/emulator/faults.ts';
import { FAULT_TYPES, startApiServer, type ApiServer, type Fault } from '../../src/testing/emulator/index.ts';
import { call, openWatch, sleep, watchAll } from './helpers.ts';

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
    api.patch(CM, 'default', 'a', { data: { n: 'changed' } });
    await sleep(150);
    expect(w.lines).toEqual([]);
    expect(api.activeWatches).toBe(1);
    w.abort();
    const r = await w.done;
    expect(r.how).toBe('client');
    await sleep(10);
    expect(api.activeWatches).toBe(0);
    expect(api.requests.at(-1)).toMatchObject({ fault: 'stallWatch', ended: 'client' });
  });

  it('stallWatch after N events, ended by api.close()', async () => {
    api = await seeded();
    api.faults.add({ fault: { type: 'stallWatch', afterEvents: 1 } });
    const w = openWatch(api, WATCH);
    await w.waitLines(1);
    await sleep(30);
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
    const r = await watchAll(api, WATCH);
    expect(r.lines).toEqual([]);
    expect(r.how).toBe('end');
    expect(r.durationMs).toBeLessThan(500);
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
      object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 3 (0)', reason: 'Expired', code: 410 },
    });
    expect(r.how).toBe('end');
  });

  it('lists every fault type in FAULT_TYPES', () => {
    expect([...FAULT_TYPES].sort()).toEqual(
      ['closeWatch', 'delay', 'dropWatch', 'expireWatch', 'malformedLine', 'oversizeLine', 'reset', 'slowWatch', 'stallWatch', 'status'].sort(),
    );
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
            // Model: a watch fault never consumes a list; anything else takes the next entry.
            let next = 0;
            const expected: (string | undefined)[] = [];
            for (const isWatch of requests) {
              const candidate = schedule[next];
              if (next < schedule.length && !(candidate && isWatchFault(candidate) && !isWatch)) {
                next++;
                expected.push(candidate?.type);
              } else expected.push(undefined);
            }
            for (const isWatch of requests) {
              if (isWatch) {
                const w = openWatch(s, `${LIST}?watch=true&resourceVersion=0&timeoutSeconds=0.03`);
                const t = setTimeout(() => w.abort(), 150);
                await w.done;
                clearTimeout(t);
              } else {
                await call(s, 'GET', LIST).catch(() => undefined);
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
