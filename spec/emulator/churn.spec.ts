import { afterEach, describe, expect, it } from 'vitest';
import { startDemo } from '../../src/cli/demo.ts';
import { MY_APPLES, startApiServer, startChurn, type ApiServer } from 'rx-informer-emulator';
import { openWatch, type OpenWatch } from './helpers.ts';

let api: ApiServer | undefined;
const watches: OpenWatch[] = [];
afterEach(async () => {
  for (const w of watches.splice(0)) w.abort();
  await api?.close();
  api = undefined;
});

/** Resolves once `check` holds, polling; the test's own timeout bounds the wait. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

describe('startChurn faults', () => {
  it('hit the watches open at that moment, not a later request', async () => {
    api = await startApiServer();
    api.registerCustomResource(MY_APPLES);
    for (const path of ['/api/v1/pods', '/apis/apps/v1/deployments', '/apis/stable.example.com/v1/myapples']) {
      const w = openWatch(api, `${path}?watch=true&resourceVersion=${api.resourceVersion}`);
      await w.ready;
      watches.push(w);
    }
    const injected: string[] = [];
    const churn = startChurn(api, { intervalMs: 2, faultEvery: 3, seed: 6, onFault: (d) => injected.push(d) });
    try {
      await until(() => injected.length >= 1);
      const first = injected[0]!;
      // Every fault of the churn starts with a watch fault on the open watch of the resource it names.
      const resource = first.slice(0, first.indexOf(':')).split('.')[0];
      await until(() => api!.requests.some((r) => r.watch && r.resource === resource && r.faultFiredAt !== undefined));
      const hit = api.requests.find((r) => r.watch && r.resource === resource && r.faultFiredAt !== undefined)!;
      expect(hit.seq).toBeLessThanOrEqual(3); // one of the three watches opened above
      expect(['dropWatch', 'expireWatch', 'malformedLine']).toContain(hit.fault);
    } finally {
      churn.stop();
    }
    expect(api.faults.pending).toBe(0); // stop() removes rules still waiting
  });
});

describe('startDemo', () => {
  it('starts a seeded emulator with a churn that announces its faults; close() frees it', async () => {
    const lines: string[] = [];
    const demo = await startDemo({ log: (l) => lines.push(l), churnIntervalMs: 2, faultEvery: 2 });
    try {
      await until(() => lines.some((l) => l.startsWith('~ emulator: injecting ')));
      expect(lines[0]).toMatch(/^rx-informer demo: API-server emulator on http:\/\/127\.0\.0\.1:\d+/);
      expect(lines.find((l) => l.startsWith('~ emulator: injecting '))).toMatch(
        /^~ emulator: injecting (pods|deployments\.apps|myapples\.stable\.example\.com): /,
      );
    } finally {
      await demo.close();
    }
  });
});
