import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { timing } from '../../examples/ha/timing.ts';

const main = fileURLToPath(new URL('../../examples/ha/main.ts', import.meta.url));

describe('examples/ha: three replicas in child processes on the emulator', () => {
  it('after the leader is killed (no release), another replica takes the Lease once it lapsed, at its first read after that', async () => {
    const output = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--conditions=rx-informer-source', main, '--json'], { timeout: 40_000 }, (error, stdout) =>
        error ? reject(new Error(`${error.message}\n${stdout}`)) : resolve(stdout),
      ),
    );
    const summary = JSON.parse(output.trim().split('\n').pop() ?? '{}') as {
      killed: string;
      next: string;
      handoverMs: number;
      handover: { holder: string; lapsedMs: number; leaseReads: number };
      timing: typeof timing;
      leaders: { identity: string }[];
      readyz: number;
    };
    expect(summary.timing).toEqual(timing);
    expect(summary.next).not.toBe(summary.killed);
    expect(summary.leaders[0]?.identity).toBe(summary.killed);
    expect(summary.handoverMs).toBeGreaterThan(0);
    expect(summary.handover.holder).toBe(summary.next);
    // Safety: nobody took the Lease before it lapsed, by the holders' own clock (one machine: one clock). A slower machine
    // only makes this longer.
    expect(summary.handover.lapsedMs).toBeGreaterThanOrEqual(timing.leaseDurationMs);
    // Liveness, counted rather than timed: from the kill to the write that took the Lease, each of the two survivors reads it
    // once to see the last renewal, then once per retryPeriod (timers never fire early) or at the lapse, leaseDuration /
    // retryPeriod times until the read that sees it lapsed: 5 here. Two reads more each as slack: a timer a millisecond early by
    // the wall clock (a 1 ms wake to the lapse), a renewal of the dead leader's that landed after the kill. A slow machine
    // reads less, not more; a candidate that missed the lapse would read on, leaseDuration / retryPeriod reads a round.
    const perSurvivor = 1 + timing.leaseDurationMs / timing.retryPeriodMs + 2;
    expect(summary.handover.leaseReads).toBeGreaterThan(0);
    expect(summary.handover.leaseReads).toBeLessThanOrEqual(2 * perSurvivor);
    // The new leader's serve(): its ConfigMap cache synced and fresh.
    expect(summary.readyz).toBe(200);
  }, 45_000);
});
