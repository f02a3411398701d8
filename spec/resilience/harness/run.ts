/**
 * Runs one schedule: an emulator, an informer with five subscribers, the
 * schedule's writes and faults, then a wait for convergence and every check.
 * Returns the divergences found (empty: the informer conformed).
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import {
  ConfigMap,
  Pod,
  informer,
  type Informer,
  type InformerError,
  type InformerOptions,
  type KubeObject,
  type Resource,
  type Store,
} from '../../../src/index.ts';
import { type ListWatch } from '../../../src/pipeline.ts';
import { httpListWatch } from '../../../src/pipeline.ts';
import { reflectorConfig } from '../../../src/2-source/listAndWatch.ts';
import { startApiServer, type ApiServer, type Fault, type FaultMatch, type RequestRecord } from 'rx-informer-emulator';
import { HarnessClock } from './clock.ts';
import { clientViews, describeRecord, expectedFor, faultFired, matchErrors, type ClientView, type Expected } from './expect.ts';
import { ServerHistory, SubscriberView, snapshotDiff, snapshotOf, type Snapshot } from './history.ts';
import { InflightProbe, ServerRequestTracker, seededRandom, sleep, until as untilReal } from './probes.ts';
import { faultKind, type Kind, type Schedule, type ScheduleConfig, type Step } from './schedule.ts';

/**
 * Timings that make recovery take milliseconds. None is an oracle: the waits below are budgets for
 * "eventually" that stretch with the event loop's delay (see `until` in probes.ts), and the watch
 * stall rule keeps its default margin on the informer's clock, which the harness moves (see `passStalls`).
 */
export const TIMING = {
  bookmarkIntervalMs: 25,
  /** Watches ask for 0.1–0.2 s. */
  minWatchTimeoutSeconds: 0.1,
  backoff: { initialMs: 5, maxMs: 50 },
  maxLineBytes: 32 * 1024,
  /** How long pending fault rules may wait for a request to take them after the schedule. */
  pendingFaultsMs: 800,
  convergeTimeoutMs: 4000,
} as const;

/**
 * How far the harness moves the informer's clock when the emulator's log shows the informer's watch
 * stalled: past the stall rule's default margin plus the longest watch timeout, so the rule fires at once.
 */
const STALL_JUMP_MS = reflectorConfig({ decode: (raw) => raw }).stallMarginMs + 2 * TIMING.minWatchTimeoutSeconds * 1000 + 1;

export interface RunOptions {
  /** Tampers with the informer's ListWatch (proves the checks can fail), or records it (on the informer's clock). */
  readonly sabotage?: (listWatch: ListWatch, clock: SchedulerLike) => ListWatch;
  /** Subscribes to the informer beside the harness's subscribers (ended with theirs, before the close check). */
  readonly observe?: (cache: Informer<KubeObject>) => Subscription;
  /**
   * Over HTTP/2 (the emulator's TLS h2 mode). The server-side request tracker sees HTTP/1.1 requests only,
   * so its checks (requests open at once, requests left open) see nothing then; the rest hold.
   */
  readonly http2?: boolean;
  /** Overrides the informer's options: proves the checks catch a broken timing rule. */
  readonly informerOptions?: Partial<InformerOptions<KubeObject>>;
}

export interface FaultCount {
  scheduled: number;
  /** Took effect (a watch fault may wait for events that never come). */
  applied: number;
}

export interface RunResult {
  readonly divergences: readonly string[];
  /** Writes, deletes and recreates performed. */
  readonly operations: number;
  readonly faults: Readonly<Record<string, FaultCount>>;
  readonly requests: number;
  readonly errorsByReason: Readonly<Record<string, number>>;
  readonly elapsedMs: number;
}

const RESOURCES: Record<Kind, Resource<KubeObject>> = { configmaps: ConfigMap, pods: Pod };

let runs = 0;

/** Writes objects through the emulator's programmatic API and records every state in the history. */
class Writer {
  operations = 0;
  private rev = 0;
  private readonly api: ApiServer;
  private readonly kind: Kind;
  private readonly history: ServerHistory;

  constructor(api: ApiServer, kind: Kind, history: ServerHistory) {
    this.api = api;
    this.kind = kind;
    this.history = history;
  }

  /** Creates the object, or patches it when it exists; a fresh `rev` label tells every state apart. */
  write(ns: string, name: string): void {
    this.operations++;
    const labels = { rev: String(++this.rev) };
    const cm = this.kind === 'configmaps';
    const existing = this.api.get(this.kind, ns, name);
    const written = existing
      ? this.api.patch(this.kind, ns, name, cm ? { metadata: { labels }, data: { rev: labels.rev } } : { metadata: { labels } })
      : this.api.create(this.kind, {
          metadata: { name, namespace: ns, labels },
          ...(cm ? { data: { rev: labels.rev } } : { spec: { containers: [{ name: 'app', image: 'busybox' }] } }),
        });
    this.history.live(written);
  }

  /** The pick-th existing object (all namespaces, key order), if any. */
  pick(pick: number): { ns: string; name: string } | undefined {
    const all = this.api.list(this.kind);
    const object = all[pick % Math.max(1, all.length)];
    return object?.metadata?.name ? { ns: object.metadata.namespace ?? 'default', name: object.metadata.name } : undefined;
  }

  delete(ns: string, name: string): void {
    this.operations++;
    this.history.deleted(this.api.delete(this.kind, ns, name));
  }
}

/**
 * The informer's subscribers: errors$, events$ from the start, store$,
 * synced$, a slow on() handler, a throwing on() handler, and a late events$
 * subscriber that joins when told. Each events view is checked as it goes.
 */
class Subscribers {
  readonly errors: InformerError[] = [];
  readonly early: SubscriberView;
  readonly late: SubscriberView;
  readonly slow: SubscriberView;
  readonly throwing: SubscriberView;
  store: Store<KubeObject> | undefined;
  synced = false;
  throws = 0;
  private slowCalls = 0;
  private readonly subscriptions: Subscription[] = [];
  private readonly cache: Informer<KubeObject>;

  constructor(
    cache: Informer<KubeObject>,
    history: ServerHistory,
    inScope: (o: { readonly metadata?: { readonly namespace?: string } }) => boolean,
  ) {
    this.cache = cache;
    this.early = new SubscriberView('events$ subscriber', history, inScope);
    this.late = new SubscriberView('late events$ subscriber', history, inScope);
    this.slow = new SubscriberView('slow on() handler', history, inScope, { coalesces: true });
    this.throwing = new SubscriberView('throwing on() handler', history, inScope, { coalesces: true });
    this.subscriptions.push(
      cache.errors$.subscribe((error) => this.errors.push(error)),
      cache.events$.subscribe((event) => this.early.apply(event)),
      cache.store$.subscribe((store) => (this.store = store)),
      cache.synced$.subscribe((synced) => (this.synced = synced)),
      cache.on(async (event) => {
        this.slow.apply(event);
        if (++this.slowCalls % 3 === 0) await sleep(1 + (this.slowCalls % 4));
      }),
      cache.on((event) => {
        this.throwing.apply(event);
        if (this.throwing.events % 4 === 0) throw new Error(`handler fault #${++this.throws}`);
      }),
    );
  }

  get views(): SubscriberView[] {
    return [this.early, this.late, this.slow, this.throwing];
  }

  add(subscription: Subscription): void {
    this.subscriptions.push(subscription);
  }

  joinLate(): void {
    this.subscriptions.push(this.cache.events$.subscribe((event) => this.late.apply(event)));
  }

  /** Why the store and views differ from the server (empty when they agree). */
  differences(want: Snapshot): string[] {
    const storeDiff = this.store ? snapshotDiff(snapshotOf(this.store.list()), want) : ['no store yet'];
    return [
      ...(storeDiff.length ? [`store: ${storeDiff.join('; ')}`] : []),
      ...this.views.flatMap((v) => {
        const diff = snapshotDiff(v.snapshot(), want);
        return diff.length ? [`${v.name}: ${diff.join('; ')}`] : [];
      }),
    ];
  }

  unsubscribe(): void {
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
  }
}

/** The fault rules given to the emulator, and what they imply. */
class FaultBook {
  readonly counts: Record<string, FaultCount> = {};
  /** Watches ended by `api.closeWatches`, by seq: clean or not. */
  readonly closedByServer = new Map<number, boolean>();
  /** Stalled watches the harness moved the informer's clock for, by seq: each owes a Timeout. */
  readonly stallsPassed = new Set<number>();
  private readonly faultOfRule = new Map<number, Fault>();
  private readonly kindOfRule = new Map<number, string>();
  private readonly api: ApiServer;

  constructor(api: ApiServer) {
    this.api = api;
  }

  scheduled(kind: string): void {
    (this.counts[kind] ??= { scheduled: 0, applied: 0 }).scheduled++;
  }

  applied(kind: string): void {
    this.counts[kind]!.applied++;
  }

  /** A rule for the next matching request; `kind` is counted when it takes effect (unless it is a helper rule). */
  add(kind: string | undefined, match: FaultMatch, fault: Fault): void {
    const handle = this.api.faults.add({ match, fault });
    this.faultOfRule.set(handle.id, fault);
    if (kind) this.kindOfRule.set(handle.id, kind);
  }

  /** Counts the faults that took effect, and returns the errors the requests imply. */
  settle(records: readonly RequestRecord[], clients: ReadonlyMap<number, ClientView>): Expected[] {
    const faultOf = (id: number | undefined) => (id === undefined ? undefined : this.faultOfRule.get(id));
    for (const r of records) {
      const kind = r.faultId === undefined ? undefined : this.kindOfRule.get(r.faultId);
      const fault = faultOf(r.faultId);
      if (kind && fault && faultFired(r, fault)) this.applied(kind);
    }
    return records.flatMap((r) =>
      expectedFor(r, faultOf, TIMING.maxLineBytes, {
        closedByServer: this.closedByServer.get(r.seq),
        stallPassed: this.stallsPassed.has(r.seq),
        client: clients.get(r.seq),
      }),
    );
  }
}

interface World {
  readonly api: ApiServer;
  readonly config: ScheduleConfig;
  readonly writer: Writer;
  readonly book: FaultBook;
  readonly userAgent: string;
  readonly clock: HarnessClock;
}

/** The informer's open watch that the emulator stalled and the harness has not yet moved the clock for. */
function stalledWatch(world: World): RequestRecord | undefined {
  const { api, userAgent, book } = world;
  return api.requests.find(
    (r) =>
      r.userAgent === userAgent &&
      r.watch &&
      r.ended === undefined &&
      r.fault === 'stallWatch' &&
      r.faultFiredAt !== undefined &&
      !book.stallsPassed.has(r.seq),
  );
}

/**
 * Time passes for the informer: when its watch is stalled at the server (and still open there), the
 * clock moves past the stall margin and the informer's stall check runs now, synchronously, so the
 * informer must report a Timeout for exactly that watch, whatever the server logs later.
 */
function passStalls(world: World): void {
  const stalled = stalledWatch(world);
  if (!stalled) return;
  world.book.stallsPassed.add(stalled.seq);
  world.clock.advance(STALL_JUMP_MS);
}

/** Waits until `check` holds, letting time pass for stalled watches while it waits. */
const until = (world: World, check: () => boolean, timeoutMs: number) => untilReal(check, timeoutMs, 5, () => passStalls(world));

/** Performs one step of a schedule. */
async function perform(step: Step, world: World): Promise<void> {
  const { api, writer, book } = world;
  const kind = faultKind(step);
  if (kind) book.scheduled(kind);
  switch (step.op) {
    case 'write':
      writer.write(step.ns, step.name);
      break;
    case 'delete':
    case 'recreate': {
      const target = writer.pick(step.pick);
      if (!target) break;
      writer.delete(target.ns, target.name);
      if (step.op === 'recreate') writer.write(target.ns, target.name);
      break;
    }
    case 'sleep':
      passStalls(world);
      await sleep(step.ms);
      passStalls(world);
      break;
    case 'untilStalled':
      if (!(await untilReal(() => stalledWatch(world) !== undefined, TIMING.convergeTimeoutMs)))
        throw new Error('untilStalled: no watch of the informer stalled');
      break;
    case 'compact':
      api.compact();
      book.applied(kind!);
      break;
    case 'closeWatches': {
      for (const r of api.requests)
        if (r.watch && r.ended === undefined && r.userAgent === world.userAgent) book.closedByServer.set(r.seq, step.clean);
      if (api.closeWatches({ clean: step.clean }) > 0) book.applied(kind!);
      break;
    }
    case 'fault':
      book.add(kind, step.target === 'watch' ? { watch: true } : {}, step.fault);
      break;
    case 'relistFault':
      book.add(undefined, { watch: true }, { type: 'expireWatch' });
      book.add(kind, {}, step.fault);
      break;
    case 'expiredContinue': {
      book.add(undefined, { watch: true }, { type: 'expireWatch' });
      book.add(undefined, {}, { type: 'status', code: 410 });
      // Page 2+ of the next list: a write and a compaction land between the pages.
      const compactBetweenPages = () => {
        writer.write(world.config.namespace ?? 'default', 'written-between-pages');
        api.compact();
        book.applied(kind!);
        return true;
      };
      book.add(
        undefined,
        { watch: false, predicate: (r) => r.query['continue'] !== undefined && compactBetweenPages() },
        { type: 'delay', ms: 0 },
      );
      break;
    }
  }
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * The end of a schedule: pending rules get a moment to find their requests,
 * then no more faults; what was under way finishes; a sentinel write; then
 * the store and every view must match the server, and match it again after a
 * second sentinel write.
 */
async function converge(world: World, tracker: ServerRequestTracker, subscribers: Subscribers): Promise<string[]> {
  const { api, config, userAgent } = world;
  const out: string[] = [];
  await until(world, () => api.faults.pending === 0, TIMING.pendingFaultsMs);
  api.faults.clear();
  const clearedAt = performance.now();
  const settled = await until(
    world,
    () => tracker.of(userAgent).every((r) => r.startAt > clearedAt || r.closeAt !== undefined),
    TIMING.convergeTimeoutMs,
  );
  if (!settled)
    out.push(
      `a request made during the schedule was still open ${TIMING.convergeTimeoutMs} ms after it: ${tracker
        .open(userAgent)
        .map((r) => r.url)
        .join(', ')}`,
    );
  world.writer.write(config.namespace ?? 'default', 'sentinel');

  const server = () => snapshotOf(api.list(config.kind, config.namespace));
  const agrees = () => subscribers.differences(server()).length === 0;
  const ok = await until(world, agrees, TIMING.convergeTimeoutMs);
  if (!ok) {
    out.push(`did not converge within ${TIMING.convergeTimeoutMs} ms`, ...subscribers.differences(server()));
    return out;
  }
  // And it stays so: a second sentinel write. Everything the server sent before it has been
  // handled once it is in, so the views agreeing again shows nothing went astray after convergence (a wait of some
  // milliseconds would cover more or less of the informer's work depending on the machine's load).
  world.writer.write(config.namespace ?? 'default', 'sentinel');
  if (!(await until(world, agrees, TIMING.convergeTimeoutMs)))
    out.push(
      `converged, then did not agree after a second sentinel write within ${TIMING.convergeTimeoutMs} ms`,
      ...subscribers.differences(server()),
    );
  return out;
}

/** Every check but convergence: histories, errors$, synced$, requests in flight. */
function check(
  records: readonly RequestRecord[],
  book: FaultBook,
  subscribers: Subscribers,
  probe: InflightProbe,
  tracker: ServerRequestTracker,
  userAgent: string,
): string[] {
  const out: string[] = [];
  if (!subscribers.synced) out.push('synced$ never became true');
  for (const v of subscribers.views) out.push(...v.violations);
  const expected = book.settle(records, clientViews(records, probe.requests));
  for (let i = 0; i < subscribers.throws; i++)
    expected.push({ reasons: ['HandlerError'], optional: false, why: `handler fault #${i + 1}` });
  const { missing, unexplained } = matchErrors(expected, subscribers.errors);
  out.push(...missing.map((m) => `not reported on errors$: ${m}`), ...unexplained.map((u) => `reported without a cause: ${u}`));
  if (probe.max > 1) out.push(`requests in flight at once: ${probe.max}; ${probe.overlaps.slice(0, 3).join('; ')}`);
  const overlaps = tracker.overlaps(userAgent);
  if (overlaps.length) out.push(`the server had requests open at once: ${overlaps.slice(0, 3).join('; ')}`);
  return out;
}

/** The informer's options in a run of `config` (a replay of the run's trace uses them too). */
export function harnessInformerOptions(config: ScheduleConfig, clock: SchedulerLike): InformerOptions<KubeObject> {
  return {
    namespace: config.namespace,
    pageSize: config.pageSize,
    watchList: config.watchList,
    minWatchTimeoutSeconds: TIMING.minWatchTimeoutSeconds,
    // The stall rule at its default margin, on the harness's clock. The idle rules are off: with them a
    // stalled watch would be resumed without an error or with one, depending on the pace of earlier events
    // (the recovery soak covers them in virtual time at their defaults).
    idleTimeoutMs: 0,
    busyIdleTimeoutMs: 0,
    scheduler: clock,
    backoff: TIMING.backoff,
    random: seededRandom(config.seed),
  };
}

/** Runs a schedule and checks everything; never throws for a divergence, only returns it. */
export async function runSchedule(schedule: Schedule, options: RunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  const config = schedule.config;
  const api = await startApiServer({
    bookmarkIntervalMs: TIMING.bookmarkIntervalMs,
    historyLimit: config.historyLimit,
    sendInitialEvents: config.serverWatchList,
    namespaces: ['ns-a', 'ns-b'],
    ...(options.http2 ? { http2: true } : {}),
  });
  const tracker = new ServerRequestTracker(api.port);
  const userAgent = `rx-informer-resilience/${++runs}`;
  const history = new ServerHistory();
  const clock = new HarnessClock();
  const world: World = { api, config, writer: new Writer(api, config.kind, history), book: new FaultBook(api), userAgent, clock };
  let subscribers: Subscribers | undefined;
  try {
    for (const o of config.initial) world.writer.write(o.ns, o.name);
    const probe = new InflightProbe(() => clock.now());
    const resource = RESOURCES[config.kind];
    const http = httpListWatch(
      api.kubeConfig,
      { resource, namespace: config.namespace },
      {
        ...{ userAgent, maxLineBytes: TIMING.maxLineBytes },
        ...(options.http2 ? { protocol: 'h2' as const } : {}),
      },
    );
    const cache = informer(probe.wrap(options.sabotage ? options.sabotage(http, clock) : http), resource, {
      ...harnessInformerOptions(config, clock),
      ...options.informerOptions,
    });
    const inScope = (o: { readonly metadata?: { readonly namespace?: string } }) =>
      config.namespace === undefined || o.metadata?.namespace === config.namespace;
    subscribers = new Subscribers(cache, history, inScope);
    if (options.observe) subscribers.add(options.observe(cache));

    for (const [i, step] of schedule.steps.entries()) {
      if (i === config.lateJoinAt) subscribers.joinLate();
      await perform(step, world);
    }
    if (config.lateJoinAt >= schedule.steps.length) subscribers.joinLate();

    const divergences = await converge(world, tracker, subscribers);
    const records = api.requests.filter((r) => r.userAgent === userAgent);
    divergences.push(...check(records, world.book, subscribers, probe, tracker, userAgent));
    const requestLog = records.map(describeRecord).join(' | '); // before teardown closes the last watch

    // The last unsubscribe must close the connection.
    subscribers.unsubscribe();
    if (!(await untilReal(() => tracker.open(userAgent).length === 0, 1000))) {
      divergences.push(
        `unsubscribing left requests open: ${tracker
          .open(userAgent)
          .map((r) => r.url)
          .join(', ')}`,
      );
    }
    if (divergences.length) {
      divergences.push(`requests: ${requestLog}`, `errors$: ${subscribers.errors.map((e) => e.reason).join(', ') || 'none'}`);
    }
    const errorsByReason: Record<string, number> = {};
    for (const e of subscribers.errors) errorsByReason[e.reason] = (errorsByReason[e.reason] ?? 0) + 1;
    return {
      divergences,
      operations: world.writer.operations,
      faults: world.book.counts,
      requests: records.length,
      errorsByReason,
      elapsedMs: performance.now() - started,
    };
  } finally {
    subscribers?.unsubscribe();
    tracker.stop();
    await api.close();
  }
}
