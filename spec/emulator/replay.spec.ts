/**
 * `startApiServer({ replay })`: the emulator serves a recorded trace over HTTP, so the real transport
 * replays it end to end: examples/replay/incident.jsonl (a 500, a 410, a relist that finds a pod re-created)
 * gives an informer over HTTP the changes the same trace gives one in virtual time.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { Pod, informer, type InformerEvent, type Pod as PodObject } from '../../src/index.ts';
import { replayListWatch } from '../../src/testing/index.ts';
import { until } from '../resilience/harness/probes.ts';
import { tracePlayer } from '../../packages/emulator/src/replay.ts';

const FILE = fileURLToPath(new URL('../../examples/replay/incident.jsonl', import.meta.url));
const TRACE = readFileSync(FILE, 'utf8');
const describeEvent = (e: InformerEvent<PodObject>) =>
  `${e.type} ${e.object.metadata.name ?? ''} ${e.object.metadata.uid ?? ''}${e.type === 'deleted' && e.finalStateUnknown ? ' unknown' : ''}`;

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('the emulator replays a trace over HTTP', () => {
  it.each([
    ['its text', TRACE, false],
    ['a file, read a line at a time', { file: FILE }, false],
    // A watch answered over HTTP/2 once wrote a Transfer-Encoding header, which HTTP/2 forbids: the server threw.
    ['its text, over HTTP/2', TRACE, true],
  ] as const)(
    'from %s: an informer over HTTP gets the changes a virtual-time replay of the same trace gets',
    async (_name, replay, http2) => {
      const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
      const virtual: string[] = [];
      scheduler.run(() => {
        const replay = replayListWatch(TRACE, { scheduler });
        const s = informer(replay, Pod, { namespace: 'shop', scheduler }).events$.subscribe((e) => virtual.push(describeEvent(e)));
        s.add(replay.finished$.subscribe(() => s.unsubscribe()));
      });
      expect(virtual.filter((e) => e.startsWith('deleted'))).toHaveLength(1);

      api = await startApiServer({ replay, namespaces: ['shop'], http2 });
      const overHttp: string[] = [];
      const http = http2 ? { protocol: 'h2' as const } : {};
      const subscription = informer(api.kubeConfig, Pod, { namespace: 'shop', http }).events$.subscribe((e) =>
        overHttp.push(describeEvent(e)),
      );
      try {
        expect(await until(() => overHttp.length >= virtual.length && api!.replay!.remaining === 0, 15_000)).toBe(true);
      } finally {
        subscription.unsubscribe();
      }
      expect(overHttp).toEqual(virtual);
      expect(api.replay?.mismatches).toEqual([]);
    },
    30_000,
  );

  it('a request the trace has not is a 500 naming it and the recorded one; the rest are served as usual', async () => {
    api = await startApiServer({ replay: TRACE, namespaces: ['shop'] });
    const url = `${api.url}/api/v1/namespaces/shop/pods?limit=7`;
    const first = await fetch(url);
    expect(first.status).toBe(500);
    const status = (await first.json()) as { message: string };
    expect(status.message).toBe(
      'replay: request #1 for pods, list {"limit":7}, is not in the trace (it has list {"limit":500,"resourceVersion":"0"} there, line 2)',
    );
    expect(api.replay?.mismatches).toEqual([status.message]);
    expect((await fetch(`${api.url}/api/v1/namespaces/shop/configmaps`)).status).toBe(200);
  });

  it('refuses a trace it cannot read', async () => {
    await expect(startApiServer({ replay: '{"format":"other"}\n' })).rejects.toThrow(
      /^replay: trace line 1: not an rx-informer-trace header$/,
    );
    await expect(startApiServer({ replay: TRACE.slice(0, -1) })).rejects.toThrow(/: truncated: the last line has no newline$/);
  });

  it('a file: refused as the text is when it cannot be read; a line that changed after it was opened is a mismatch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-emulator-replay-'));
    try {
      const cut = join(dir, 'cut.jsonl');
      writeFileSync(cut, TRACE.slice(0, -1));
      await expect(startApiServer({ replay: { file: cut } })).rejects.toThrow(/truncated/);
      const bad = join(dir, 'bad.jsonl');
      writeFileSync(bad, TRACE.replace(/\n[^\n]*\n$/, '\n{"type":\n'));
      await expect(startApiServer({ replay: { file: bad } })).rejects.toThrow(/^replay: trace line \d+: not JSON/);
      await expect(startApiServer({ replay: `${TRACE}null\n` })).rejects.toThrow(
        /^replay: trace line \d+: \(line\): Invalid input: expected object, received null$/,
      );

      const changing = join(dir, 'changing.jsonl');
      writeFileSync(changing, TRACE);
      api = await startApiServer({ replay: { file: changing }, namespaces: ['shop'] });
      appendFileSync(changing, '\n');
      await expect(fetch(`${api.url}/api/v1/namespaces/shop/pods?limit=500&resourceVersion=0`)).rejects.toThrow();
      expect(api.replay?.mismatches).toEqual([expect.stringMatching(/^replay: the trace file changed after it was opened/)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the trace player keeps the recorded gaps', () => {
  const DAY = 24 * 3600 * 1000;
  /** A response that only collects what is written on it. */
  function fakeResponse(): ServerResponse & { written: string[]; ended: boolean } {
    const res = Object.assign(new EventEmitter(), {
      written: [] as string[],
      ended: false,
      destroyed: false,
      headersSent: false,
      writeHead: () => ((res.headersSent = true), res),
      flushHeaders: () => undefined,
      write: (chunk: string) => (res.written.push(chunk), true),
      end: () => ((res.ended = true), res),
      destroy: () => ((res.destroyed = true), res.emit('close'), res),
    });
    return res as unknown as ServerResponse & { written: string[]; ended: boolean };
  }
  const event = (name: string) => ({ type: 'ADDED', object: { kind: 'Pod', apiVersion: 'v1', metadata: { name, namespace: 'shop' } } });

  it("a gap over 2^31−1 ms (24.8 days, past Node's timers) between two lines waits it out (fake timers)", () => {
    vi.useFakeTimers();
    const lines = [
      {
        type: 'header',
        format: 'rx-informer-trace',
        version: 1,
        startedAt: '2026-11-27T00:00:00.000Z',
        resources: ['pods'],
        redacted: true,
      },
      { type: 'watch', at: 0, id: 0, options: { resourceVersion: '1' } },
      { type: 'event', at: 5, id: 0, event: event('a') },
      { type: 'event', at: 5 + 30 * DAY, id: 0, event: event('b') },
      { type: 'end', at: 6 + 30 * DAY, id: 0, how: 'complete' },
    ];
    const player = tracePlayer(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    try {
      const res = fakeResponse();
      const req = { method: 'GET', url: '/api/v1/namespaces/shop/pods?watch=true&resourceVersion=1' } as IncomingMessage;
      expect(player.answer(req, res)).toBe(true);
      vi.advanceTimersByTime(5);
      expect(res.written.map((w) => (JSON.parse(w) as { object: { metadata: { name: string } } }).object.metadata.name)).toEqual(['a']);
      vi.advanceTimersByTime(30 * DAY - 1);
      expect(res.written).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(res.written).toHaveLength(2);
      expect(res.ended).toBe(false);
      vi.advanceTimersByTime(1);
      expect(res.ended).toBe(true);
      expect(player.state.mismatches).toEqual([]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      player.close();
      vi.useRealTimers();
    }
  });

  it('a line it could not write again (nested 200,000 deep) is refused as it is read, as the library refuses it', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const text = [
      {
        type: 'header',
        format: 'rx-informer-trace',
        version: 1,
        startedAt: '2026-11-27T00:00:00.000Z',
        resources: ['pods'],
        redacted: true,
      },
      { type: 'list', at: 0, id: 0, options: { limit: 500, resourceVersion: '0' } },
    ]
      .map((l) => `${JSON.stringify(l)}\n`)
      .join('')
      .concat(`{"type":"page","at":1,"id":0,"resourceVersion":"5","items":[{"metadata":{"name":"d"},"spec":${deep}}]}\n`);
    expect(() => tracePlayer(text)).toThrow(/^replay: trace line 3: nested deeper than 1000 levels$/);
  });

  it('closing the response mid-gap frees the chained timer', () => {
    vi.useFakeTimers();
    const lines = [
      {
        type: 'header',
        format: 'rx-informer-trace',
        version: 1,
        startedAt: '2026-11-27T00:00:00.000Z',
        resources: ['pods'],
        redacted: true,
      },
      { type: 'watch', at: 0, id: 0, options: { resourceVersion: '1' } },
      { type: 'event', at: 60 * DAY, id: 0, event: event('late') },
    ];
    const player = tracePlayer(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    try {
      const res = fakeResponse();
      player.answer({ method: 'GET', url: '/api/v1/pods?watch=1&resourceVersion=1' } as IncomingMessage, res);
      vi.advanceTimersByTime(30 * DAY);
      expect(vi.getTimerCount()).toBe(1);
      res.destroy();
      expect(vi.getTimerCount()).toBe(0);
      expect(res.written).toEqual([]);
    } finally {
      player.close();
      vi.useRealTimers();
    }
  });
});
