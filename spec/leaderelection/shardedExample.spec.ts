import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const main = fileURLToPath(new URL('../../examples/sharded/main.ts', import.meta.url));

interface Report {
  readonly identity: string;
  readonly owned: readonly number[];
  readonly cached: number;
  readonly heapMB: number;
}

describe('examples/sharded: three sharded replicas in child processes on the emulator', () => {
  it('split the pods between them; after one is killed the other two cache its shards', async () => {
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--conditions=rx-informer-source', '--expose-gc', main, '--pods', '2000', '--fast', '--json'],
        { timeout: 100_000 },
        (error, stdout) => (error ? reject(new Error(`${error.message}\n${stdout}`)) : resolve(stdout)),
      ),
    );
    const summary = JSON.parse(output.trim().split('\n').pop() ?? '{}') as {
      pods: number;
      before: Report[];
      after: Report[];
      victim: string;
      refillMs: number;
      exits: Record<string, number | null>;
      leases: Record<string, string | undefined>;
    };
    const shardsOf = (reports: Report[]) => reports.flatMap((r) => r.owned).sort((a, b) => a - b);
    const all = Array.from({ length: 12 }, (_, i) => i);
    expect(summary.before).toHaveLength(3);
    expect(shardsOf(summary.before)).toEqual(all);
    expect(summary.before.reduce((n, r) => n + r.cached, 0)).toBe(2000);
    for (const r of summary.before) expect(r.cached).toBeLessThan(2000);
    expect(summary.after.map((r) => r.identity)).not.toContain(summary.victim);
    expect(shardsOf(summary.after)).toEqual(all);
    expect(summary.after.reduce((n, r) => n + r.cached, 0)).toBe(2000);
    // The emulator closed once every replica had exited through its SIGTERM path (code 0: releases answered), with
    // every shard's Lease and the survivors' member Leases released; before, it closed 500 ms after SIGTERM, whatever
    // the replicas were doing.
    const survivors = summary.after.map((r) => r.identity);
    expect(summary.exits).toEqual(Object.fromEntries([...survivors, 'unsharded'].map((identity) => [identity, 0])));
    const released = Object.fromEntries(
      [...all.map((i) => `pods-shard-${i}`), ...survivors.map((id) => `pods-member-${id}`)].map((n) => [n, '']),
    );
    expect(summary.leases).toMatchObject(released);
  }, 110_000);
});
