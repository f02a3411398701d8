/**
 * Recovery in real time (issue #13): with default options, an informer
 * converges within seconds of a fault. Everything runs in virtual time against
 * the simulated kube-apiserver (spec/resilience/recovery), so minutes of
 * server time take milliseconds and nothing depends on the machine's speed.
 *
 * - 132 seeded schedules (12 per fault kind), each failing its kind's test if
 *   the bound is missed, the store never equals the server, or it diverges
 *   after converging. A failure prints the seed, the schedule and a trace;
 *   replay with `npm run soak -- --recovery --seed S --schedules 1`.
 *   `RECOVERY_SEED` moves the first seed (to explore; the default is fixed).
 * - Single-fault scenarios, each asserting its rule and bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filter } from 'rxjs';
import type { ListWatch } from '../../src/pipeline.ts';
import { FAULT_KINDS, ROUND_TRIP_SLACK_MS, scheduleFor, type FaultKind } from './recovery/faults.ts';
import { markdownTable, summarize } from './recovery/report.ts';
import { Sim, formatTime, runRecovery, type RecoveryResult } from './recovery/simulation.ts';
import type { SimRequest, WatchHandle } from './recovery/simServer.ts';

const FIRST_SEED = Number(process.env.RECOVERY_SEED ?? 1);
const PER_KIND = 12;
const SCHEDULES = PER_KIND * FAULT_KINDS.length;

describe(`recovery latency with default options: ${SCHEDULES} seeded schedules in virtual time`, () => {
  let results: RecoveryResult[] = [];
  beforeAll(() => {
    for (let i = 0; i < SCHEDULES; i++) results.push(runRecovery(scheduleFor(FIRST_SEED + i)));
  });
  afterAll(() => {
    if (results.length > 0)
      console.log(`recovery latency, seeds ${FIRST_SEED}–${FIRST_SEED + SCHEDULES - 1}:\n${markdownTable(summarize(results))}`);
  });

  it.each(FAULT_KINDS)('%s: every schedule converges within its bound, and stays converged', (kind: FaultKind) => {
    const mine = results.filter((r) => r.schedule.kind === kind);
    expect(mine.length).toBeGreaterThanOrEqual(PER_KIND);
    const failing = mine.filter((r) => r.problems.length > 0);
    const message = failing
      .map((r, i) =>
        i < 2
          ? `\n✗ seed ${r.schedule.seed}: ${r.problems.join('; ')}\n  replay: npm run soak -- --recovery --seed ${r.schedule.seed} --schedules 1\n${r.report.replace(/^/gm, '    ')}`
          : `\n✗ seed ${r.schedule.seed}: ${r.problems.join('; ').slice(0, 300)}`,
      )
      .join('\n');
    expect(failing.length, `${failing.length} of ${mine.length} ${kind} schedules failed:${message}`).toBe(0);
  });

  it('the checks can fail: a ListWatch that swallows DELETED events never converges', () => {
    const swallowDeletes = (inner: ListWatch): ListWatch => ({
      list: (options) => inner.list(options),
      watch: (options) => inner.watch(options).pipe(filter((frame) => !('type' in frame && frame.type === 'DELETED'))),
    });
    // A drop schedule: resuming never replays what was swallowed.
    const seed = FAULT_KINDS.indexOf('drop') + FAULT_KINDS.length * 3;
    const sabotaged = Array.from({ length: 5 }, (_, i) =>
      runRecovery(scheduleFor(seed + i * FAULT_KINDS.length), 'virtual', swallowDeletes),
    );
    expect(sabotaged.every((r) => r.schedule.kind === 'drop')).toBe(true);
    expect(
      sabotaged.filter((r) => r.problems.some((p) => p.startsWith('did not converge') || p.includes('divergence'))).length,
    ).toBeGreaterThan(0);
  });
});

// ── single faults ──────────────────────────────────────────────────────────

/** A synced informer whose watch has delivered an event (a watch in progress). */
function inProgress(seed = 11): Sim {
  const sim = new Sim({ seed, initialObjects: 6 });
  sim.start();
  sim.runTo(5_000);
  write(sim, 'default/cm-0');
  expect(sim.equal()).toBe(true);
  return sim;
}

/** Writes one object now and lets a few ms pass. */
function write(sim: Sim, key: string): string {
  const [namespace, name] = key.split('/') as [string, string];
  sim.server.write(namespace, name);
  sim.runTo(sim.now + 100);
  return sim.server.state().get(key)!;
}

/** The open watch in progress. */
function openWatch(sim: Sim): WatchHandle {
  let handle: WatchHandle | undefined;
  sim.server.whenProgressed((w) => (handle = w));
  if (!handle) throw new Error('no watch in progress');
  return handle;
}

const requestsFrom = (sim: Sim, at: number): SimRequest[] => sim.server.requests.filter((r) => r.at >= at);
const lists = (sim: Sim) => sim.server.requests.filter((r) => r.kind === 'list').length;
const describeRequests = (requests: readonly SimRequest[]) =>
  requests.map((r) => `${formatTime(r.at)} ${r.kind} rv=${JSON.stringify(r.options.resourceVersion)}`).join(', ');

/** Runs until the store equals the server after `after`; returns when (or undefined by `limit`). */
function convergedBy(sim: Sim, after: number, limit: number): number | undefined {
  return sim.runUntil(() => sim.now >= after && sim.equal(), limit) ? sim.now : undefined;
}

/** At most this long between a watch's end and the request that follows "at once" (no backoff wait: its least is 800 ms). */
const AT_ONCE_MS = 10;

describe('single faults, default options, virtual time', () => {
  it('a stalled watch with default options is resumed within 60 s of virtual time and the store converges', () => {
    const sim = inProgress();
    const stalled = openWatch(sim);
    const lastRV = sim.server.state().get('default/cm-0');
    stalled.stall();
    const stalledAt = sim.now;
    const listsBefore = lists(sim);
    sim.at(stalledAt + 10, () => sim.server.write('ns-a', 'cm-1')); // the stalled watch will not bring it

    const at = convergedBy(sim, stalledAt + 10, stalledAt + 120_000);
    expect(at, `not converged 120 s after the stall: ${sim.differences().join('; ')}`).toBeDefined();
    expect(at! - stalledAt).toBeLessThanOrEqual(60_000 + ROUND_TRIP_SLACK_MS);
    const [resume] = requestsFrom(sim, stalledAt);
    expect(resume?.kind).toBe('watch');
    expect(resume?.options.resourceVersion).toBe(lastRV); // resumed from the same resourceVersion, not relisted
    expect(lists(sim)).toBe(listsBefore);
  });

  it('a watch stalled during churn (a write every 300 ms) is resumed within 20 s of its last frame (busyIdleTimeoutMs) and the store converges', () => {
    const sim = inProgress();
    const churnUntil = sim.now + 30_000;
    for (let at = sim.now + 300; at < churnUntil; at += 300) sim.at(at, () => sim.server.write('ns-a', `cm-${at % 7}`));
    sim.runTo(churnUntil - 150);
    const stalled = openWatch(sim);
    const lastFrameAt = sim.now;
    stalled.stall();
    const listsBefore = lists(sim);
    sim.at(lastFrameAt + 10, () => sim.server.write('ns-a', 'cm-1')); // the stalled watch will not bring it
    const at = convergedBy(sim, lastFrameAt + 10, lastFrameAt + 120_000);
    expect(at, `not converged 120 s after the stall: ${sim.differences().join('; ')}`).toBeDefined();
    expect(at! - lastFrameAt).toBeLessThanOrEqual(20_000);
    const [resume] = requestsFrom(sim, lastFrameAt + 1);
    expect(resume?.kind, describeRequests(requestsFrom(sim, lastFrameAt))).toBe('watch');
    // Not before busyIdleTimeoutMs after the last write's frame (the last write was 300 ms before churnUntil).
    expect(resume!.at).toBeGreaterThanOrEqual(churnUntil - 300 + 15_000);
    expect(lists(sim)).toBe(listsBefore);
  });

  it('the quiet-cost check can fail: watches that end every 10 s spend more than one request a minute while quiet', () => {
    const shortWatches = (inner: ListWatch): ListWatch => ({
      list: (options) => inner.list(options),
      watch: (options) => inner.watch({ ...options, timeoutSeconds: 10 }),
    });
    const seed = FAULT_KINDS.indexOf('drop') + FAULT_KINDS.length * 3;
    const result = runRecovery(scheduleFor(seed), 'virtual', shortWatches);
    expect(result.schedule.kind).toBe('drop');
    expect(
      result.problems.some((p) => p.includes('of quiet after converging')),
      result.problems.join('; '),
    ).toBe(true);
  });

  it('a watch that delivered events then broke resumes at once, no backoff', () => {
    const sim = inProgress();
    const lastRV = sim.server.state().get('default/cm-0');
    openWatch(sim).drop('watch: the connection closed mid-stream');
    const droppedAt = sim.now;
    sim.server.write('ns-b', 'cm-2');
    const at = convergedBy(sim, droppedAt, droppedAt + 10_000);
    const [resume] = requestsFrom(sim, droppedAt);
    expect(resume?.kind).toBe('watch');
    expect(resume?.options.resourceVersion).toBe(lastRV);
    expect(resume!.at - droppedAt, `requests: ${describeRequests(requestsFrom(sim, droppedAt))}`).toBeLessThanOrEqual(AT_ONCE_MS);
    expect(at! - droppedAt).toBeLessThanOrEqual(2_000);
  });

  it('a malformed line in place of an event: the lost change is recovered without a relist', () => {
    const sim = inProgress();
    const lastRV = sim.server.state().get('default/cm-0');
    const listsBefore = lists(sim);
    let malformedAt: number | undefined;
    sim.server.armStreamFault('malformed', (at) => (malformedAt = at));
    const lost = write(sim, 'ns-a/cm-4'); // its event is the one replaced
    expect(malformedAt).toBeDefined();

    const at = convergedBy(sim, malformedAt!, malformedAt! + 600_000);
    expect(at, `the lost change never arrived: ${sim.differences().join('; ')}`).toBeDefined();
    expect(sim.storeState().get('ns-a/cm-4')).toBe(lost);
    expect(at! - malformedAt!).toBeLessThanOrEqual(2_000);
    expect(lists(sim)).toBe(listsBefore);
    const [resume] = requestsFrom(sim, malformedAt!);
    expect(resume?.kind).toBe('watch');
    expect(resume?.options.resourceVersion).toBe(lastRV); // from before the lost event
  });

  it('three watches in a row that broke after progress: the first two resume at once, the third is followed by a relist after one backoff (0.8–1.6 s)', () => {
    const sim = inProgress();
    const listsBefore = lists(sim);
    const next: SimRequest[] = [];
    const breaks: number[] = [];
    for (let i = 0; i < 3; i++) {
      openWatch(sim).drop('watch: read ECONNRESET');
      const brokeAt = sim.now;
      breaks.push(brokeAt);
      sim.runUntil(() => requestsFrom(sim, brokeAt).length > 0, brokeAt + 120_000);
      const request = requestsFrom(sim, brokeAt)[0];
      if (!request) throw new Error(`no request after break ${i + 1}`);
      next.push(request);
      if (request.kind === 'watch') write(sim, `ns-b/cm-${i}`); // progress on the resumed watch
    }
    expect(
      next.map((r) => r.kind),
      describeRequests(next),
    ).toEqual(['watch', 'watch', 'list']);
    next.slice(0, 2).forEach((r, i) => expect(r.at - breaks[i]!, describeRequests(next)).toBeLessThanOrEqual(AT_ONCE_MS));
    // Progress reset the backoff, so the relist waits its first step: [800, 1600) ms.
    expect(next[2]!.at - breaks[2]!, describeRequests(next)).toBeGreaterThanOrEqual(800);
    expect(next[2]!.at - breaks[2]!, describeRequests(next)).toBeLessThan(1600 + AT_ONCE_MS);
    expect(lists(sim)).toBe(listsBefore + 1);
    expect(convergedBy(sim, sim.now, sim.now + 10_000)).toBeDefined();
  });

  it('a watch black-holed during churn (accepted, never answered) is resumed 15 s after it was opened (busyIdleTimeoutMs), from the same resourceVersion, before the transport’s 30 s request timeout, without a relist', () => {
    const sim = inProgress();
    const churnUntil = sim.now + 30_000;
    for (let at = sim.now + 300; at < churnUntil; at += 300) sim.at(at, () => sim.server.write('ns-a', `cm-${at % 7}`));
    sim.runTo(churnUntil - 150);
    const watch = openWatch(sim);
    let holeAt: number | undefined;
    sim.server.blackHoleNext('watch', (at) => (holeAt = at));
    watch.drop('watch: read ECONNRESET');
    const listsBefore = lists(sim);
    const at = convergedBy(sim, churnUntil, churnUntil + 120_000);
    expect(holeAt, 'no watch met the black hole').toBeDefined();
    expect(at, `not converged: ${sim.differences().join('; ')}`).toBeDefined();
    const [hole, resume] = requestsFrom(sim, holeAt! - 1);
    expect(hole?.outcome, describeRequests(requestsFrom(sim, holeAt! - 1))).toMatch(/black hole/);
    expect(hole?.end).toBe('abort'); // the informer gave up on it, not the transport
    expect(resume?.kind).toBe('watch');
    expect(resume?.options.resourceVersion).toBe(hole?.options.resourceVersion);
    expect(resume!.at - hole!.at).toBeGreaterThanOrEqual(15_000);
    expect(resume!.at - hole!.at).toBeLessThanOrEqual(15_000 + AT_ONCE_MS);
    expect(lists(sim)).toBe(listsBefore);
    // Ending a silent watch is not a failure: nothing after the drop's NetworkError.
    expect(sim.errors.filter((e) => e.at > holeAt!).map((e) => e.error.reason)).toEqual([]);
  });

  it('a relist black-holed: the transport gives up after its 30 s request timeout (Timeout), and the informer lists again after one backoff step', () => {
    const sim = inProgress();
    const watch = openWatch(sim);
    let holeAt: number | undefined;
    sim.server.blackHoleNext('list', (at) => (holeAt = at));
    sim.server.expireWindow();
    watch.errorEvent({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'too old',
      reason: 'Expired',
      code: 410,
    });
    const expiredAt = sim.now;
    sim.server.write('ns-b', 'cm-3');
    const at = convergedBy(sim, expiredAt, expiredAt + 300_000);
    expect(holeAt, 'no list met the black hole').toBeDefined();
    expect(at, `not converged: ${sim.differences().join('; ')}`).toBeDefined();
    const timeouts = sim.errors.filter((e) => e.error.reason === 'Timeout');
    expect(timeouts.map((e) => e.error.phase)).toEqual(['list']);
    expect(timeouts[0]!.at - holeAt!).toBeCloseTo(30_000, -1);
    const [, relist] = requestsFrom(sim, holeAt! - 1);
    expect(relist?.kind, describeRequests(requestsFrom(sim, expiredAt))).toBe('list');
    expect(relist!.at - timeouts[0]!.at).toBeGreaterThanOrEqual(800);
    expect(relist!.at - timeouts[0]!.at).toBeLessThan(3_200 + AT_ONCE_MS);
    expect(at! - holeAt!).toBeLessThanOrEqual(30_000 + 3_200 + ROUND_TRIP_SLACK_MS);
  });

  it('Too large resource version on a watch → after the backoff a list at the last resourceVersion; its 504 → a list at "" at once', () => {
    const sim = inProgress();
    const watch = openWatch(sim);
    let firstAt: number | undefined;
    sim.server.tooLargeFrom(watch.startRV + 1, (at) => (firstAt = at));
    watch.close();
    const closedAt = sim.now;
    sim.server.write('default', 'cm-5');
    sim.runUntil(() => firstAt !== undefined, closedAt + 30_000);
    expect(firstAt, 'no request met the too-large condition').toBeDefined();
    // client-go's order: the backoff, a list at the last resourceVersion (the watch cache; 504 again after the cacher's
    // 3 s), then at once a list at "".
    sim.runUntil(() => requestsFrom(sim, firstAt! + 1).length > 1, firstAt! + 120_000);
    const [relist, latest] = requestsFrom(sim, firstAt! + 1);
    const asked = describeRequests(requestsFrom(sim, closedAt));
    expect(relist?.kind, asked).toBe('list');
    expect(relist?.options.resourceVersion, asked).toBe(String(watch.startRV + 1));
    expect(relist && 'limit' in relist.options ? relist.options.limit : undefined, asked).toBeUndefined();
    expect(relist!.at - firstAt!, asked).toBeGreaterThanOrEqual(800);
    expect(relist!.at - firstAt!, asked).toBeLessThanOrEqual(1_600 + AT_ONCE_MS);
    expect(latest?.kind, asked).toBe('list');
    expect(latest?.options.resourceVersion ?? '', asked).toBe('');
    expect(latest!.at - relist!.at - 3_000, asked).toBeLessThanOrEqual(AT_ONCE_MS);
    const at = convergedBy(sim, firstAt!, firstAt! + 60_000);
    expect(at! - firstAt!).toBeLessThanOrEqual(1_600 + 3_000 + 2_000 + 50);
  });

  it('Retry-After: 2592000 → waits at most 300 s, never a busy loop (count requests)', () => {
    const sim = inProgress();
    sim.server.failNext(429, 1_000, 2_592_000);
    openWatch(sim).close();
    const from = sim.now;
    const overloadEnds = from + 30 * 60_000;
    sim.runTo(overloadEnds);
    const during = requestsFrom(sim, from);
    // 30 min at 300 s a wait: 6 or 7 attempts (the first at once after the clean end).
    expect(during.length, describeRequests(during)).toBeGreaterThanOrEqual(6);
    expect(during.length, describeRequests(during)).toBeLessThanOrEqual(8);
    for (let i = 1; i < during.length; i++) {
      const gap = during[i]!.at - during[i - 1]!.at;
      expect(gap, describeRequests(during)).toBeGreaterThanOrEqual(800);
      expect(gap, describeRequests(during)).toBeLessThanOrEqual(300_000 + ROUND_TRIP_SLACK_MS);
    }
    sim.server.clearFailures();
    sim.server.write('ns-a', 'cm-6');
    const at = convergedBy(sim, overloadEnds, overloadEnds + 600_000);
    expect(at, `not converged after the overload: ${sim.differences().join('; ')}`).toBeDefined();
    expect(at! - overloadEnds).toBeLessThanOrEqual(300_000 + ROUND_TRIP_SLACK_MS);
  });
});
