/**
 * Virtual-time runs of an informer with default options against the
 * simulated server: one VirtualTimeScheduler drives both, so a run of many
 * virtual minutes takes milliseconds and depends on nothing but its seed.
 *
 * `Sim` is the bench (scheduler, server, informer, store, trace);
 * `runRecovery` plays one schedule on it and measures the time from the last
 * fault to the store equalling the server.
 */
import { VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { ConfigMap, informer, type Informer, type InformerError, type Store } from '../../../src/index.ts';
import { type ListWatch } from '../../../src/pipeline.ts';
import { FAULTS, backoffLevel, describeSchedule, type RecoverySchedule } from './faults.ts';
import { Rng, subSeed } from './random.ts';
import { NAMESPACES, SimServer } from './simServer.ts';

/** Phases of a run (ms of virtual time). */
export const RUN = {
  /** An episode that finds no watch in progress for this long ends the run (the informer is stuck). */
  applyWithinMs: 600_000,
  /** How long to wait for convergence after the last fault. */
  convergeWithinMs: 900_000,
  /** How long the store must then keep equalling the server: past the longest watch timeout (600 s). */
  holdMs: 660_000,
  /**
   * While quiet (the hold phase: no writes, no faults) an informer may spend one cheap resume per
   * idle minute (idleTimeoutMs), plus one when a busy watch first goes silent (busyIdleTimeoutMs)
   * and one for a watch ended by the server's timeout: more is a request loop on a quiet type.
   */
  quietRequestsPerMinute: 1,
  /** Safety net against a busy loop. */
  maxRequests: 20_000,
} as const;

/** More actions than this at one virtual instant is a livelock (a busy instant has a few dozen). */
const MAX_ACTIONS_PER_INSTANT = 100_000;

/** Work kept rescheduling itself at one virtual instant. */
export class LivelockError extends Error {
  readonly at: number;
  constructor(at: number, action: { readonly work?: unknown }) {
    const work = typeof action.work === 'function' ? action.work.toString().replace(/\s+/g, ' ').slice(0, 300) : 'unknown work';
    super(`livelock at ${formatTime(at)}: an action keeps rescheduling itself at the same instant: ${work}`);
    this.name = 'LivelockError';
    this.at = at;
  }
}

const NAMES = ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5', 'cm-6'] as const;

/**
 * `virtual`: rxjs's VirtualTimeScheduler as is (fractional ms; a delay of 0
 * runs at the same instant). `node`: timers as Node runs them behind
 * asyncScheduler (setTimeout): whole ms, no delay under 1 ms.
 */
export type Clock = 'virtual' | 'node';

/** A VirtualAction that fires when a Node timer would: at a whole ms, at least 1 ms later. */
class NodeTimerAction<T> extends VirtualAction<T> {
  override schedule(state?: T, delay = 0): Subscription {
    const frame = (this.scheduler as VirtualTimeScheduler).frame;
    return super.schedule(state, Math.ceil(frame + Math.max(1, delay)) - frame);
  }
}

export interface SimOptions {
  readonly seed: number;
  /** ConfigMaps created before the informer starts. Default 8. */
  readonly initialObjects?: number;
  /** Default `virtual`. */
  readonly clock?: Clock;
  /** Tampers with the informer's ListWatch: proves the checks can fail. */
  readonly sabotage?: (listWatch: ListWatch) => ListWatch;
}

/** The bench: a virtual clock, the simulated server, and an informer over it with default options. */
export class Sim {
  readonly scheduler: VirtualTimeScheduler;
  readonly server: SimServer;
  readonly cache: Informer<ConfigMap>;
  readonly errors: { readonly at: number; readonly error: InformerError }[] = [];
  readonly notes: { readonly at: number; readonly text: string }[] = [];
  store: Store<ConfigMap> | undefined;
  /** Bumped on every store snapshot. */
  storeVersion = 0;
  private readonly writes: Rng;
  private readonly subscriptions: Subscription[] = [];

  constructor(options: SimOptions) {
    this.scheduler =
      options.clock === 'node'
        ? new VirtualTimeScheduler(NodeTimerAction as unknown as ConstructorParameters<typeof VirtualTimeScheduler>[0])
        : new VirtualTimeScheduler();
    this.server = new SimServer(this.scheduler, new Rng(subSeed(options.seed, 1)));
    this.writes = new Rng(subSeed(options.seed, 2));
    for (let i = 0; i < (options.initialObjects ?? 8); i++) this.writeRandom();
    // Default options: only the clock and the randomness are injected.
    this.cache = informer(options.sabotage ? options.sabotage(this.server) : this.server, ConfigMap, {
      scheduler: this.scheduler,
      random: new Rng(subSeed(options.seed, 3)).asFunction(),
    });
  }

  get now(): number {
    return this.scheduler.now();
  }

  start(): void {
    this.subscriptions.push(
      this.cache.store$.subscribe((store) => {
        this.store = store;
        this.storeVersion++;
      }),
      this.cache.errors$.subscribe((error) => this.errors.push({ at: this.now, error })),
    );
  }

  /** Unsubscribes everything; returns the requests the server still had open (a leak). */
  stop(): number {
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
    this.server.stop();
    return this.server.open;
  }

  note(text: string): void {
    this.notes.push({ at: this.now, text });
  }

  /** Runs `work` at virtual time `at` (absolute ms). */
  at(at: number, work: () => void): Subscription {
    return this.scheduler.schedule(work, Math.max(0, at - this.now));
  }

  /** Writes one random ConfigMap: created if absent, else updated (3 in 4) or deleted. */
  writeRandom(): string {
    const key = `${this.writes.pick(NAMESPACES)}/${this.writes.pick(NAMES)}`;
    const [namespace, name] = key.split('/') as [string, string];
    if (this.server.has(key) && this.writes.chance(0.25)) return this.server.delete(key);
    return this.server.write(namespace, name);
  }

  /**
   * Runs the next virtual instant (every action due then, including those it
   * schedules for the same instant). False when nothing is scheduled.
   */
  step(): boolean {
    const { actions } = this.scheduler;
    const head = actions[0];
    if (!head) return false;
    const instant = head.delay;
    // VirtualTimeScheduler.flush, with a guard: work that keeps rescheduling itself
    // at the same instant (a delay too small to move a float clock) would hang it.
    let ran = 0;
    for (let action = actions[0]; action && action.delay <= instant; action = actions[0]) {
      if (++ran > MAX_ACTIONS_PER_INSTANT) throw new LivelockError(instant, action as unknown as { readonly work?: unknown });
      actions.shift();
      this.scheduler.frame = action.delay;
      const error: unknown = action.execute(action.state, action.delay);
      if (error) throw error;
    }
    return true;
  }

  /** Steps until `until` holds (checked after every instant) or virtual time passes `limit`. True when `until` held. */
  runUntil(until: () => boolean, limit: number): boolean {
    if (until()) return true;
    while (this.scheduler.actions.length > 0 && (this.scheduler.actions[0]?.delay ?? Infinity) <= limit) {
      this.step();
      if (until()) return true;
    }
    return false;
  }

  /** Runs to virtual time `at`. */
  runTo(at: number): void {
    this.at(at, () => undefined);
    this.runUntil(() => false, at);
  }

  /** key → resourceVersion of the store. */
  storeState(): Map<string, string> {
    const out = new Map<string, string>();
    for (const object of this.store?.list() ?? [])
      out.set(`${object.metadata.namespace}/${object.metadata.name}`, object.metadata.resourceVersion ?? '');
    return out;
  }

  /** Why the store differs from the server (empty: equal). */
  differences(): string[] {
    const want = this.server.state();
    const have = this.storeState();
    const out: string[] = [];
    for (const [key, rv] of want)
      if (have.get(key) !== rv) out.push(have.has(key) ? `${key} at ${have.get(key)}, server ${rv}` : `${key} missing (server ${rv})`);
    for (const [key, rv] of have) if (!want.has(key)) out.push(`${key} at ${rv} deleted on the server`);
    return out;
  }

  private compared = { server: -1, store: -1, equal: false };

  /** Whether the store equals the server, recomputed only after a change on either side. */
  equal(): boolean {
    const c = this.compared;
    if (c.server !== this.server.version || c.store !== this.storeVersion) {
      this.compared = {
        server: this.server.version,
        store: this.storeVersion,
        equal: this.store !== undefined && this.differences().length === 0,
      };
    }
    return this.compared.equal;
  }

  /** Requests, faults, writes and errors in time order, from `from` on. */
  trace(from = 0, max = 80): string[] {
    const lines = [
      ...this.server.trace.map((t) => ({ at: t.at, text: `server  ${t.text}` })),
      ...this.notes.map((t) => ({ at: t.at, text: `harness ${t.text}` })),
      ...this.errors.map((e) => ({
        at: e.at,
        text: `errors$ ${e.error.reason}${e.error.status ? ` ${e.error.status}` : ''}: ${e.error.message}`,
      })),
    ]
      .filter((l) => l.at >= from)
      .sort((a, b) => a.at - b.at)
      .map((l) => `${formatTime(l.at).padStart(10)}  ${l.text}`);
    return lines.length > max ? [`… ${lines.length - max} earlier lines`, ...lines.slice(-max)] : lines;
  }
}

export function formatTime(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

export interface RecoveryResult {
  readonly schedule: RecoverySchedule;
  /** When the last episode took effect. */
  readonly appliedAt: number | undefined;
  /** When its recovery clock started. */
  readonly measuredFrom: number | undefined;
  readonly convergedAt: number | undefined;
  /** convergedAt − measuredFrom; Infinity when it never converged (or the fault never took effect). */
  readonly latencyMs: number;
  readonly boundMs: number;
  /** Moments the store stopped equalling the server after it had converged. */
  readonly divergences: number;
  /** Why the run fails its bound (empty: it passed). */
  readonly problems: readonly string[];
  readonly requests: number;
  /** Requests after converging, while quiet (the hold phase). */
  readonly quietRequests: number;
  readonly lists: number;
  readonly errorsByReason: Readonly<Record<string, number>>;
  readonly virtualMs: number;
  /** The schedule and the trace of the end of the run, for a failure report. */
  readonly report: string;
}

/**
 * Plays a schedule: churn with the schedule's fault episodes; after the last
 * one took effect, a few writes and then quiet; measures when the store first
 * equals the server after both the fault's measured start and the last write,
 * then checks that it keeps equalling it past every watch timeout.
 */
export function runRecovery(schedule: RecoverySchedule, clock: Clock = 'virtual', sabotage?: SimOptions['sabotage']): RecoveryResult {
  const sim = new Sim({ seed: schedule.seed, initialObjects: schedule.initialObjects, clock, sabotage });
  const spec = FAULTS[schedule.kind];
  const problems: string[] = [];
  // Widened on purpose: the fault hooks change it from callbacks.
  let phase = 'churn' as 'churn' | 'measure' | 'hold';
  let lastWriteAt = 0;
  let appliedAt: number | undefined;
  let measuredFrom: number | undefined;
  let convergedAt: number | undefined;
  let armedAt = 0;
  let applyDeadline = schedule.episodes[0]!.afterMs + RUN.applyWithinMs;
  let boundMs = spec.boundMs(schedule.episodes[schedule.episodes.length - 1]!, 0);
  let divergences = 0;
  let wasEqual = false;
  let firstDivergence: string | undefined;

  const gaps = new Rng(subSeed(schedule.seed, 5));
  const churn = () => {
    if (phase !== 'churn') return;
    sim.writeRandom();
    lastWriteAt = sim.now;
    sim.at(sim.now + gaps.exponential(schedule.writeMeanMs, 5, 5_000), churn);
  };

  const arm = (index: number) => {
    const episode = schedule.episodes[index]!;
    const last = index === schedule.episodes.length - 1;
    armedAt = sim.now;
    applyDeadline = sim.now + RUN.applyWithinMs;
    sim.note(`fault ${index + 1}/${schedule.episodes.length} armed`);
    spec.inject(sim.server, episode, {
      applied: (what) => {
        sim.note(`fault ${index + 1}/${schedule.episodes.length} took effect: ${what}`);
        if (!last) {
          sim.at(sim.now + schedule.episodes[index + 1]!.afterMs, () => arm(index + 1));
          return;
        }
        appliedAt = sim.now;
        boundMs = spec.boundMs(episode, backoffLevel(sim.server.failures, sim.now));
        phase = 'measure';
        // A few writes the informer has to fetch through its recovery, then quiet.
        const tail = new Rng(subSeed(schedule.seed, 4));
        for (let i = 0; i < schedule.tailWrites; i++) {
          const at = sim.now + tail.int(1, 50);
          lastWriteAt = Math.max(lastWriteAt, at);
          sim.at(at, () => sim.note(`write ${sim.writeRandom()}`));
        }
      },
      measureFrom: (what) => {
        if (!last || phase === 'churn') return;
        measuredFrom = sim.now;
        sim.note(`the recovery clock starts: ${what}`);
      },
    });
  };

  try {
    sim.start();
    sim.at(1, churn);
    sim.at(schedule.episodes[0]!.afterMs, () => arm(0));
    const limit = () => {
      switch (phase) {
        case 'churn':
          return applyDeadline;
        case 'measure':
          return (measuredFrom ?? appliedAt ?? sim.now) + RUN.convergeWithinMs;
        case 'hold':
          return (convergedAt ?? sim.now) + RUN.holdMs;
      }
    };
    for (;;) {
      const next = sim.scheduler.actions[0]?.delay;
      if (next === undefined || next > limit()) break;
      sim.step();
      if (sim.server.requests.length > RUN.maxRequests) {
        problems.push(`more than ${RUN.maxRequests} requests: a busy loop`);
        break;
      }
      const equal = sim.equal();
      if (phase === 'measure' && measuredFrom !== undefined && equal && sim.now >= lastWriteAt && sim.now >= measuredFrom) {
        convergedAt = sim.now;
        phase = 'hold';
        sim.note(`converged, ${formatTime(convergedAt - measuredFrom)} after the fault`);
      } else if (phase === 'hold') {
        if (wasEqual && !equal) {
          divergences++;
          firstDivergence ??= `${formatTime(sim.now)}: ${sim.differences().join('; ')}`;
          sim.note(`diverged: ${sim.differences().join('; ')}`);
        }
      }
      wasEqual = equal;
    }
    if (phase === 'churn')
      problems.push(
        `fault ${schedule.episodes.length > 1 ? 'episode ' : ''}never took effect: no watch in progress for ${formatTime(RUN.applyWithinMs)} after it was armed`,
      );
    else if (appliedAt !== undefined && measuredFrom === undefined)
      problems.push(
        `the fault's recovery clock never started (${schedule.kind === 'reset' ? 'no request was refused' : 'no 504 was sent'})`,
      );
    else if (convergedAt === undefined)
      problems.push(
        `did not converge within ${formatTime(RUN.convergeWithinMs)} of the fault: ${sim.differences().join('; ') || 'equal, but only before the last write or the fault'}`,
      );
    if (divergences > 0) problems.push(`${divergences} divergence(s) after converging; first at ${firstDivergence}`);
    if (sim.server.maxOpen > 1) problems.push(`${sim.server.maxOpen} requests open at once`);
    if (convergedAt !== undefined) {
      const quiet = sim.server.requests.filter((r) => r.at > convergedAt!);
      const allowed = Math.floor(((sim.now - convergedAt) / 60_000) * RUN.quietRequestsPerMinute) + 2;
      if (quiet.length > allowed)
        problems.push(`${quiet.length} requests in the ${formatTime(sim.now - convergedAt)} of quiet after converging; at most ${allowed}`);
    }
  } catch (error) {
    problems.push(
      error instanceof LivelockError ? error.message : `threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  }
  const leaked = sim.stop();
  if (leaked > 0) problems.push(`${leaked} request(s) still open after the last unsubscribe`);

  const latencyMs = convergedAt !== undefined && measuredFrom !== undefined ? convergedAt - measuredFrom : Infinity;
  if (latencyMs > boundMs && convergedAt !== undefined)
    problems.unshift(`converged ${formatTime(latencyMs)} after the fault; bound ${formatTime(boundMs)}`);
  const errorsByReason: Record<string, number> = {};
  for (const { error } of sim.errors) errorsByReason[error.reason] = (errorsByReason[error.reason] ?? 0) + 1;
  const traceFrom = Math.max(0, (appliedAt ?? armedAt) - 5_000);
  const report = [
    describeSchedule(schedule),
    `fault took effect at ${appliedAt === undefined ? '—' : formatTime(appliedAt)}, clock from ${measuredFrom === undefined ? '—' : formatTime(measuredFrom)}, converged at ${convergedAt === undefined ? '—' : formatTime(convergedAt)}; bound ${formatTime(boundMs)}`,
    'trace (virtual time):',
    ...sim.trace(traceFrom).map((l) => `  ${l}`),
  ].join('\n');
  return {
    schedule,
    appliedAt,
    measuredFrom,
    convergedAt,
    latencyMs,
    boundMs,
    divergences,
    problems,
    requests: sim.server.requests.length,
    quietRequests: convergedAt === undefined ? 0 : sim.server.requests.filter((r) => r.at > convergedAt!).length,
    lists: sim.server.requests.filter((r) => r.kind === 'list').length,
    errorsByReason,
    virtualMs: sim.now,
    report,
  };
}
