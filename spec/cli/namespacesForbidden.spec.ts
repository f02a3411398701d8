/**
 * `watch -n` with one namespace the user may not list: up to 16 namespaces it is one informer per namespace, past 16
 * one informer over all of them; either way that namespace is left out (`! not watching configmaps in ns-03`) and
 * the rest are watched (audit23: past 16 the whole command failed, none of the namespaces the user may read watched).
 * With --all past 16 the dynamic watch runs the one informer and cannot make it again over fewer: the resource is left
 * out, with one line naming the namespace that did it (left71: the line read as a resource forbidden everywhere); a
 * resource forbidden only cluster-wide is watched namespace by namespace, with no line.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { watchCommand, type Watching } from '../../src/cli/watch.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { killAll } from './support.ts';

let api: ApiServer | undefined;
let watching: Watching | undefined;
afterEach(async () => {
  watching?.stop();
  watching = undefined;
  await api?.close();
  api = undefined;
});
afterAll(() => killAll());

const names = (n: number) => Array.from({ length: n }, (_, i) => `ns-${String(i).padStart(2, '0')}`);

/** `forbidden`: the namespaces the user may not list configmaps in (and never cluster-wide); ns-03 unless said. */
async function run(count: number, forbidden: (namespace: string) => boolean = (ns) => ns === 'ns-03', all = false) {
  const namespaces = names(count);
  api = await startApiServer({ http2: true, namespaces });
  for (const ns of namespaces) api.create('configmaps', { metadata: { name: 'settings', namespace: ns } });
  api.faults.add({
    match: { predicate: (q) => q.resource === 'configmaps' && (q.namespace === undefined || forbidden(q.namespace)) },
    times: Infinity,
    fault: {
      type: 'status',
      code: 403,
      reason: 'Forbidden',
      message: 'configmaps is forbidden: User "dev" cannot list resource "configmaps"',
    },
  });
  // Secrets: not cluster-wide, in every namespace.
  api.faults.add({
    match: { predicate: (q) => q.resource === 'secrets' && q.namespace === undefined },
    times: Infinity,
    fault: { type: 'status', code: 403, reason: 'Forbidden', message: 'secrets is forbidden: User "dev" cannot list resource "secrets"' },
  });
  const out: string[] = [];
  const err: string[] = [];
  watching = await watchCommand(
    api.kubeConfig,
    { resources: all ? [] : ['configmaps'], all, output: 'pretty', namespaces },
    { out: (l: string) => out.push(l), err: (l: string) => err.push(l) },
  );
  const outcome = await Promise.race([
    watching.synced.then(() => 'synced'),
    watching.failed.then((why) => `failed: ${String(why)}`),
    new Promise((r) => setTimeout(() => r('timeout'), 20_000)),
  ]);
  return { outcome, err, namespaces };
}

describe('watch -n: one forbidden namespace among 16 or 17 is left out, the rest watched', () => {
  it('16 namespaces: ns-03 left out, the other 15 watched', async () => {
    const { outcome, err } = await run(16);
    expect(outcome).toBe('synced');
    expect(err.some((l) => l.startsWith('! not watching configmaps in ns-03'))).toBe(true);
    expect(err.filter((l) => /^synced configmaps in ns-/.test(l)).length).toBe(15);
    // The sync line says the namespaces watched, not those asked for (audit30: it said `(16 namespaces)`).
    expect(err.filter((l) => /^synced 1 resource, 15 objects in \d+ ms \(15 of 16 namespaces\);/.test(l))).toHaveLength(1);
  }, 30_000);

  it('17 namespaces (one informer over all): ns-03 left out, the other 16 watched', async () => {
    const { outcome, err } = await run(17);
    expect(outcome).toBe('synced');
    expect(err.filter((l) => l.startsWith('! not watching configmaps in ns-03'))).toHaveLength(1);
    // Its label and the sync line count the namespaces it still reads (audit30: both said 17).
    expect(err).toContain('synced configmaps in 16 namespaces: 16 objects');
    expect(err.filter((l) => /^synced 1 resource, 16 objects in \d+ ms \(16 of 17 namespaces\);/.test(l))).toHaveLength(1);
    expect(err.filter((l) => l.startsWith('! '))).toHaveLength(1);
  }, 30_000);
});

describe('watch --all -n: past 16 namespaces, a forbidden one leaves its resource out, with one line saying which namespace', () => {
  it('17 namespaces: configmaps left out naming ns-03; secrets, forbidden only cluster-wide, watched', async () => {
    const { outcome, err } = await run(17, undefined, true);
    expect(outcome).toBe('synced');
    expect(err.filter((l) => l.startsWith('! '))).toEqual([
      '! not watching configmaps in 17 namespaces: ns-03 may not be listed, and with --all that leaves the whole resource out ' +
        '(without --all only ns-03 is): forbidden (403): configmaps is forbidden: User "dev" cannot list resource "configmaps"',
    ]);
    expect(err).toContain('synced secrets in 17 namespaces: 0 objects');
  }, 60_000);
});

describe('watch -n past 16 namespaces, many of them forbidden (audit35)', () => {
  // Each namespace refused made a new informer over the rest, which listed every one of them again: requests grew as
  // namespaces × forbidden ones (40 and 20: 651 lists; 200 and 100: 20,510 requests, 68 s). Now the refusals of a round
  // are collected and the informer is made again once: about two lists per namespace, plus the refused ones' retries.
  it('40 namespaces, 20 forbidden: each said once, the other 20 watched, the lists about one per namespace and round', async () => {
    const { outcome, err, namespaces } = await run(40, (ns) => Number(ns.slice(3)) % 2 === 0);
    expect(outcome).toBe('synced');
    expect(err.filter((l) => l.startsWith('! not watching configmaps in ns-'))).toHaveLength(20);
    expect(err).toContain('synced configmaps in 20 namespaces: 20 objects');
    const lists = api!.requests.filter((r) => r.resource === 'configmaps' && !r.watch);
    expect(lists.length).toBeLessThan(3 * namespaces.length);
  }, 30_000);

  it('17 namespaces, all forbidden: the last one named, and the sentence says all 17, as up to 16 it does', async () => {
    const { outcome, err } = await run(17, () => true);
    // It read `cannot watch configmaps in 1 namespace: forbidden (403): …`, naming neither the 17 nor the last.
    expect(outcome).toBe('failed: cannot watch configmaps in any of the 17 namespaces');
    expect(err.filter((l) => l.startsWith('! not watching configmaps in ns-'))).toHaveLength(17);
  }, 30_000);
});
