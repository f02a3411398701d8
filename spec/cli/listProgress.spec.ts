/**
 * `rx-informer watch` shows a long list's progress ("listing configmaps: 1,500
 * objects so far") at most every 5 s while it runs. The terminal's clock is
 * injected: each reading is 3 s after the one before, so of the three pages
 * that go on (of four), the first starts the clock, the second is 3 s in
 * (too soon) and the third 6 s in (shown).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { watchCommand } from '../../src/cli/watch.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('rx-informer watch: list progress', () => {
  it('shows objects so far while a paged list runs, at most every 5 s', async () => {
    api = await startApiServer();
    // The first list (rv "0") is served whole from the watch cache; a 410 on it makes the informer
    // list again at rv "", in pages of 500, as after a compaction on a real server.
    api.faults.add({
      match: { resource: 'configmaps', watch: false, predicate: (r) => r.query['resourceVersion'] === '0' },
      fault: { type: 'status', code: 410, reason: 'Expired' },
    });
    for (let i = 0; i < 1_600; i++) api.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'default' }, data: {} });
    const err: string[] = [];
    let clock = 0;
    const terminal = { out: () => {}, err: (line: string) => err.push(line), now: () => new Date((clock += 3_000)) };
    const w = await watchCommand(api.kubeConfig, { resources: ['configmaps'], all: false, output: 'json' }, terminal);
    try {
      await w.synced;
      expect(err.filter((line) => line.startsWith('listing '))).toEqual(['listing configmaps: 1,500 objects so far']);
      expect(err).toContain('synced configmaps: 1600 objects');
    } finally {
      w.stop();
    }
  });
});
