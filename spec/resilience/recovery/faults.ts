/**
 * The fault kinds of the recovery-latency soak, described once: what each
 * does to the simulated server, when its recovery clock starts, and the bound
 * an informer with default options must meet (issue #13). Schedules are plain
 * data drawn from a seed, printed readably with every failure.
 */
import { Rng, subSeed } from './random.ts';
import { ONE_LIST_MS, SERVER, type SimServer, type WatchHandle } from './simServer.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../../src/1-transport/httpTransport.ts';

export const FAULT_KINDS = [
  'drop',
  'truncate',
  'malformed',
  'reset',
  'stall',
  '429',
  '5xx',
  'expire',
  'tooLarge',
  'blackHoleWatch',
  'blackHoleList',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One occurrence of a schedule's fault. */
export interface Episode {
  /** Armed this long after the previous episode took effect (the first: after the informer started). */
  readonly afterMs: number;
  /** 429/5xx: requests answered with the error; reset: connections refused. */
  readonly count: number;
  /** 429/5xx: the HTTP status. */
  readonly code: number | undefined;
  /** 429: the Retry-After header (seconds). */
  readonly retryAfterSeconds: number | undefined;
}

export interface RecoverySchedule {
  readonly seed: number;
  readonly kind: FaultKind;
  /** ConfigMaps that exist before the informer starts. */
  readonly initialObjects: number;
  /** Mean time between writes during the churn (exponential, 5 ms – 5 s). */
  readonly writeMeanMs: number;
  /** 1–3 episodes of the kind; latency is measured for the last one. */
  readonly episodes: readonly Episode[];
  /** Writes within 50 ms after the last fault took effect, then no more: the informer must fetch them through the recovery. */
  readonly tailWrites: number;
}

/** The hooks a fault calls: when it took effect, and when the time to converge starts. */
export interface FaultHooks {
  applied(what: string): void;
  measureFrom(what: string): void;
}

interface FaultSpec {
  /** What it does, for the report. */
  readonly what: string;
  /** Its bound, in words (the report's column). */
  readonly bound: string;
  readonly draw: (rng: Rng) => Pick<Episode, 'count' | 'code' | 'retryAfterSeconds'>;
  /** Injects the episode: at once on an open watch in progress, else on the next one that delivers a frame. */
  readonly inject: (server: SimServer, episode: Episode, hooks: FaultHooks) => void;
  /** ms from the measured start to convergence, given the reflector's backoff level before the episode. */
  readonly boundMs: (episode: Episode, level: number) => number;
}

/** Slack for round trips after a wait (request, response, a replay), well above the simulated latencies. */
export const ROUND_TRIP_SLACK_MS = 1_000;
/** The reflector's backoff (client-go): 800 ms doubling to 30 s, jitter 1 (waits in [d, 2d)), reset after 2 min without a backoff. */
export const BACKOFF = { initialMs: 800, maxMs: 30_000, resetAfterMs: 120_000 } as const;
/** The longest wait a Retry-After may impose (issue #13). */
export const RETRY_AFTER_CAP_S = 300;

/** The longest the `step`-th consecutive backoff wait can be (step ≥ 1): just under 2·d. */
export function backoffCeilingMs(step: number): number {
  return 2 * Math.min(BACKOFF.initialMs * 2 ** (step - 1), BACKOFF.maxMs);
}

/**
 * The time for the backoff to reach the first attempt after `failures`
 * consecutive failed requests, at most: one wait per failure plus one more
 * (in case the end of the watch that opened the episode is counted too), each
 * as long as the backoff allows or Retry-After asks (capped), whichever is longer.
 */
export function backoffSequenceMs(level: number, failures: number, retryAfterSeconds?: number): number {
  const retryAfterMs = Math.min(retryAfterSeconds ?? 0, RETRY_AFTER_CAP_S) * 1000;
  let total = 0;
  for (let step = level + 1; step <= level + failures + 1; step++) total += Math.max(backoffCeilingMs(step), retryAfterMs);
  return total;
}

/**
 * How many failures a client-go backoff may have counted before `at`: every
 * failure the server caused, the count starting over after two quiet minutes.
 */
export function backoffLevel(failures: readonly number[], at: number): number {
  let level = 0;
  let last = -Infinity;
  for (const failure of failures) {
    if (failure >= at) break;
    level = failure - last > BACKOFF.resetAfterMs ? 1 : level + 1;
    last = failure;
  }
  return at - last > BACKOFF.resetAfterMs ? 0 : level;
}

const one = () => ({ count: 1, code: undefined, retryAfterSeconds: undefined });
/** The fault took effect, and the time to converge starts with it. */
const appliedAndMeasured = (hooks: FaultHooks, what: string) => {
  hooks.applied(what);
  hooks.measureFrom(what);
};
const onWatch = (server: SimServer, act: (watch: WatchHandle) => string, hooks: FaultHooks) =>
  server.whenProgressed((watch) => appliedAndMeasured(hooks, act(watch)));
/** A MalformedLine frame in place of the next event (`truncate`: then the end of the watch). */
const streamFault =
  (kind: 'malformed' | 'truncate', what: string): FaultSpec['inject'] =>
  (server, _, hooks) =>
    server.armStreamFault(kind, () => appliedAndMeasured(hooks, what));
/** The server ends the watch, then answers the next `count` requests with the episode's status (and Retry-After). */
const failAfterWatch: FaultSpec['inject'] = (server, episode, hooks) =>
  onWatch(
    server,
    (w) => {
      const code = episode.code ?? 500;
      server.failNext(code, episode.count, episode.retryAfterSeconds);
      w.close();
      const retryAfter = episode.retryAfterSeconds === undefined ? '' : ` Retry-After: ${episode.retryAfterSeconds}`;
      return `ended watch #${w.request.seq}; ${episode.count} × ${code}${retryAfter}`;
    },
    hooks,
  );
/** The watch cache forgets the history; the watch in progress gets ERROR 410 Expired, worded as kube-apiserver does. */
const expire = (server: SimServer, w: WatchHandle) => {
  const floor = server.resourceVersion;
  server.expireWindow();
  w.errorEvent({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${w.startRV} (${floor})`,
    reason: 'Expired',
    code: 410,
  });
};

export const FAULTS: Readonly<Record<FaultKind, FaultSpec>> = {
  drop: {
    what: 'the watch in progress breaks (NetworkError, the connection closed mid-stream)',
    bound: '≤ 2 s',
    draw: one,
    inject: (server, _, hooks) =>
      onWatch(server, (w) => (w.drop('watch: the connection closed mid-stream'), `dropped watch #${w.request.seq}`), hooks),
    boundMs: () => 2_000,
  },
  truncate: {
    what: 'the watch ends cleanly inside a line: a MalformedLine frame in place of the next event, then the end',
    bound: '≤ 2 s',
    draw: one,
    inject: streamFault('truncate', 'truncated the watch'),
    boundMs: () => 2_000,
  },
  malformed: {
    what: 'a MalformedLine frame in place of the next event (its change is lost unless the informer resumes from before it)',
    bound: '≤ 2 s',
    draw: one,
    inject: streamFault('malformed', 'a malformed line in place of an event'),
    boundMs: () => 2_000,
  },
  reset: {
    // One refused connection: with client-go's backoff a second would wait [1.6, 3.2) s, past the 2 s target.
    what: 'the watch in progress is reset (ECONNRESET) and the next connection is refused (ECONNREFUSED)',
    bound: '≤ 2 s after the refusal',
    draw: one,
    inject: (server, episode, hooks) =>
      server.whenProgressed((w) => {
        server.refuseNext(episode.count, () => hooks.measureFrom('a connection refused'));
        w.drop('watch: read ECONNRESET');
        hooks.applied(`reset watch #${w.request.seq}`);
      }),
    boundMs: () => 2_000,
  },
  stall: {
    what: 'the watch in progress goes silent forever, its connection open (no frame, no end)',
    // Every schedule stalls during churn (a write every 0.2–1.5 s): the adaptive idle rule
    // (busyIdleTimeoutMs, 15 s) resumes it; a quiet type's 60 s rule is checked by the hold phase's request count.
    bound: '≤ 20 s during churn (was ≤ 60 s)',
    draw: one,
    inject: (server, _, hooks) => onWatch(server, (w) => (w.stall(), `stalled watch #${w.request.seq}`), hooks),
    boundMs: () => 20_000,
  },
  blackHoleWatch: {
    what: 'the watch in progress breaks (NetworkError), and the connection of the resume is accepted and never answered (no headers, no frame, no end)',
    // The reflector's idle rule (busyIdleTimeoutMs during churn) ends the silent watch before the transport's
    // 30 s request timeout would; either way it resumes from the same resourceVersion.
    bound: '≤ 20 s during churn',
    draw: one,
    inject: (server, _, hooks) =>
      server.whenProgressed((w) => {
        server.blackHoleNext('watch', () => hooks.measureFrom('a watch accepted and never answered'));
        w.drop('watch: read ECONNRESET');
        hooks.applied(`dropped watch #${w.request.seq}; the next watch is black-holed`);
      }),
    boundMs: () => 20_000,
  },
  blackHoleList: {
    what: 'the watch gets ERROR 410 Expired, and the connection of the relist is accepted and never answered',
    // Nothing in the reflector times a list out: the transport's requestTimeoutMs (30 s) does, then the backoff.
    bound: '≤ 30 s (request timeout) + the backoff + one list (+ 1 s)',
    draw: one,
    inject: (server, _, hooks) =>
      onWatch(
        server,
        (w) => {
          server.blackHoleNext('list', () => hooks.measureFrom('a list accepted and never answered'));
          expire(server, w);
          return `expired watch #${w.request.seq}; the relist is black-holed`;
        },
        { applied: hooks.applied, measureFrom: () => undefined },
      ),
    boundMs: (_, level) => DEFAULT_REQUEST_TIMEOUT_MS + backoffSequenceMs(level, 1) + ONE_LIST_MS + ROUND_TRIP_SLACK_MS,
  },
  '429': {
    what: 'the server ends the watch, then answers the next 1–3 requests 429 with Retry-After',
    bound: 'within the backoff sequence (+ 1 s)',
    draw: (rng) => ({ count: rng.int(1, 3), code: 429, retryAfterSeconds: rng.pick([1, 1, 2, 5, 10, 30]) }),
    inject: failAfterWatch,
    boundMs: (episode, level) => backoffSequenceMs(level, episode.count, episode.retryAfterSeconds) + ROUND_TRIP_SLACK_MS,
  },
  '5xx': {
    what: 'the server ends the watch, then answers the next 1–3 requests 500 or 503',
    bound: 'within the backoff sequence (+ 1 s)',
    draw: (rng) => ({ count: rng.int(1, 3), code: rng.pick([500, 503]), retryAfterSeconds: undefined }),
    inject: failAfterWatch,
    boundMs: (episode, level) => backoffSequenceMs(level, episode.count) + ROUND_TRIP_SLACK_MS,
  },
  expire: {
    what: 'the watch cache forgets the history; the watch in progress gets an ERROR 410 Expired event',
    bound: '≤ 2 s + one list',
    draw: one,
    inject: (server, _, hooks) => onWatch(server, (w) => (expire(server, w), `expired watch #${w.request.seq}`), hooks),
    boundMs: () => 2_000 + ONE_LIST_MS,
  },
  tooLarge: {
    what: 'the server ends the watch; requests at the informer\'s resourceVersion get 504 "Too large resource version" (after the cacher\'s 3 s wait) until a list at ""',
    bound: '≤ one backoff step + 3 s (a 504 on the list at its rv) + 2 s + one list after the first 504',
    draw: one,
    inject: (server, _, hooks) =>
      server.whenProgressed((w) => {
        server.tooLargeFrom(w.startRV + 1, () => hooks.measureFrom('the first 504 Too large resource version'));
        w.close();
        hooks.applied(`ended watch #${w.request.seq}; resourceVersions from ${w.startRV + 1} are too large`);
      }),
    // client-go's order: the backoff, a list at the last resourceVersion (504 again, after the cacher's wait), then at "".
    boundMs: (_, level) => backoffSequenceMs(level, 0) + SERVER.tooLargeWaitMs + 2_000 + ONE_LIST_MS,
  },
};

/** The schedule of a seed: the kind cycles with the seed, so consecutive seeds cover every kind. */
export function scheduleFor(seed: number): RecoverySchedule {
  const kind = FAULT_KINDS[((seed % FAULT_KINDS.length) + FAULT_KINDS.length) % FAULT_KINDS.length]!;
  const rng = new Rng(subSeed(seed, 0));
  const episodes: Episode[] = [];
  const count = rng.int(1, 3);
  for (let i = 0; i < count; i++)
    episodes.push({ afterMs: i === 0 ? rng.int(5_000, 60_000) : rng.int(5_000, 90_000), ...FAULTS[kind].draw(rng) });
  return { seed, kind, initialObjects: rng.int(5, 15), writeMeanMs: rng.int(200, 1_500), episodes, tailWrites: rng.int(1, 3) };
}

export function describeEpisode(kind: FaultKind, episode: Episode): string {
  switch (kind) {
    case '429':
      return `${episode.count} × 429, Retry-After: ${episode.retryAfterSeconds}`;
    case '5xx':
      return `${episode.count} × ${episode.code}`;
    case 'reset':
      return `${episode.count} refused`;
    case 'drop':
    case 'truncate':
    case 'malformed':
    case 'stall':
    case 'expire':
    case 'tooLarge':
    case 'blackHoleWatch':
    case 'blackHoleList':
      return kind;
    default: {
      const unknown: never = kind;
      return unknown;
    }
  }
}

export function describeSchedule(schedule: RecoverySchedule): string {
  const spec = FAULTS[schedule.kind];
  return [
    `seed ${schedule.seed}: ${schedule.kind} (${spec.what}); bound ${spec.bound}`,
    `${schedule.initialObjects} ConfigMaps at the start; a write every ${schedule.writeMeanMs} ms on average (create, update or delete of 21 names in 3 namespaces)`,
    ...schedule.episodes.map(
      (e, i) =>
        `  ${i + 1}. ${(e.afterMs / 1000).toFixed(3)} s after ${i === 0 ? 'the start' : 'the previous one took effect'}: ${describeEpisode(schedule.kind, e)}`,
    ),
    `then ${schedule.tailWrites} write(s) within 50 ms, and no more writes or faults`,
  ].join('\n');
}
