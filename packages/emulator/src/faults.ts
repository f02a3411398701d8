/**
 * Fault injection. Faults are plain data (easy to generate in property-based
 * tests); rules pick which requests get them, each use is recorded in the
 * request log.
 *
 * Every fault kind is described once: its parameters in {@link FaultParams} and
 * its behaviour in {@link FAULT_KINDS}. The lists (`FAULT_TYPES`), the
 * request/watch split and the matching derive from these two; the appliers
 * (http/requestFaults.ts for request faults, watch.ts for watch faults) switch exhaustively,
 * so adding a kind is: one entry in each, then whatever the compiler asks for.
 */

/** Where a watch fault triggers: after `afterEvents` ADDED/MODIFIED/DELETED lines or `afterMs`, whichever first; neither: at once. */
export interface WatchTrigger {
  afterEvents?: number;
  afterMs?: number;
}

/** The parameters of each fault kind, by `type`. */
export interface FaultParams {
  /** Answer with this HTTP status and a Status body; 429 carries `Retry-After` (default 1 s). */
  status: { code: number; retryAfterSeconds?: number; message?: string; reason?: string };
  /** Destroy the connection without any response. */
  reset: Record<never, never>;
  /** Handle the request normally after a delay. */
  delay: { ms: number };
  /**
   * Handle the request normally, but write its response body in two parts: the first `afterBytes` bytes (of the body
   * as sent: gzipped when it is), then the rest once `resume` settles; without `resume`, never (the response stays
   * open until the client aborts or the server closes). `reset: true` destroys the connection (HTTP/2: resets the
   * stream) instead of writing the rest (without `resume`: as soon as the first part is written). For a client that acts on a body's first bytes (a list's continue token).
   */
  pauseBody: { afterBytes: number; resume?: PromiseLike<unknown>; reset?: boolean };
  /**
   * Answer a list (or a streaming list) at `resourceVersion=N` as a server that has not reached N:
   * 504 `Timeout: Too large resource version: N, current: C` (a watch-list gets it as an ERROR line).
   * `current` defaults to the server's revision, or N − 1 when that is not below N.
   */
  tooLargeResourceVersion: { current?: number };
  /**
   * Destroy the socket: no terminating chunk (the client sees an aborted body). Over HTTP/2 only the stream is reset,
   * with RST_STREAM `http2Code` (default `INTERNAL_ERROR`; `NO_ERROR`: a reset before END_STREAM that a client must
   * not read as the end of the response).
   */
  dropWatch: WatchTrigger & { http2Code?: 'INTERNAL_ERROR' | 'NO_ERROR' };
  /** Stop writing (events, bookmarks, timeout) but keep the socket open until the client aborts or the server closes. */
  stallWatch: WatchTrigger;
  /** Write one line that is not JSON, then carry on. */
  malformedLine: { line?: string } & WatchTrigger;
  /** Write one JSON line of about `bytes` bytes (default 3 MiB): a BOOKMARK padded with an annotation. Then carry on. */
  oversizeLine: { bytes?: number } & WatchTrigger;
  /** End the response cleanly (terminating chunk). With no trigger: a very short, empty watch. */
  closeWatch: WatchTrigger;
  /** Write an ERROR line with a 410 Expired Status, then end the response (like 04a). */
  expireWatch: WatchTrigger;
  /** Write the rest of the response in `chunkBytes` pieces every `delayMs` (defaults 64 B / 5 ms). */
  slowWatch: { chunkBytes?: number; delayMs?: number };
}

export type FaultType = keyof FaultParams;

/** One fault: `{ type, ...params }`. */
export type Fault = { [K in FaultType]: { type: K } & FaultParams[K] }[FaultType];

/** What a rule sees of a request. */
export interface FaultRequestInfo {
  method: string;
  path: string;
  query: Record<string, string>;
  watch: boolean;
  group?: string;
  version?: string;
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface FaultKind {
  /**
   * `request`: answered before the request is handled (http/requestFaults.ts).
   * `watch`: applied by the watch stream (watch.ts), also to watches already open (`live: true`).
   */
  readonly target: 'request' | 'watch';
  /** The requests this kind can take; others neither get nor consume it. */
  readonly takes: (req: FaultRequestInfo) => boolean;
}

const anyRequest = (): boolean => true;
const watches = (req: FaultRequestInfo): boolean => req.watch;
/** A list, or a streaming list, at a resourceVersion N > 0: the requests a server can find "too large". */
const readsAtResourceVersion = (req: FaultRequestInfo): boolean => {
  const rv = req.query['resourceVersion'];
  if (req.method !== 'GET' || req.resource === undefined || req.subresource !== undefined) return false;
  if (rv === undefined || !/^\d+$/.test(rv) || Number(rv) === 0) return false;
  return req.watch ? req.query['sendInitialEvents'] === 'true' : req.name === undefined && !req.query['continue'];
};

/** Every fault kind, with where it applies. */
export const FAULT_KINDS = {
  status: { target: 'request', takes: anyRequest },
  reset: { target: 'request', takes: anyRequest },
  delay: { target: 'request', takes: anyRequest },
  pauseBody: { target: 'request', takes: anyRequest },
  tooLargeResourceVersion: { target: 'request', takes: readsAtResourceVersion },
  dropWatch: { target: 'watch', takes: watches },
  stallWatch: { target: 'watch', takes: watches },
  malformedLine: { target: 'watch', takes: watches },
  oversizeLine: { target: 'watch', takes: watches },
  closeWatch: { target: 'watch', takes: watches },
  expireWatch: { target: 'watch', takes: watches },
  slowWatch: { target: 'watch', takes: watches },
} as const satisfies Record<FaultType, FaultKind>;

type WatchFaultType = { [K in FaultType]: (typeof FAULT_KINDS)[K]['target'] extends 'watch' ? K : never }[FaultType];

/** A fault that only applies to watch requests (and can be applied to watches already open). */
export type WatchFault = Extract<Fault, { type: WatchFaultType }>;
/** A fault answered before the request is handled. */
export type RequestFault = Exclude<Fault, WatchFault>;

/** Every fault type, handy for generators (`fc.constantFrom(...FAULT_TYPES)`). */
export const FAULT_TYPES: readonly FaultType[] = Object.keys(FAULT_KINDS) as FaultType[];

export function isWatchFault(f: Fault): f is WatchFault {
  return FAULT_KINDS[f.type].target === 'watch';
}

/** Which requests a rule applies to; every given field must match. */
export interface FaultMatch {
  method?: string | string[];
  /** Plural resource name, e.g. `pods`. */
  resource?: string;
  group?: string;
  namespace?: string;
  name?: string;
  /** true: watch requests only; false: everything but watches. Watch faults imply true. */
  watch?: boolean;
  /** Matched against the URL path (string: exact). */
  path?: string | RegExp;
  predicate?: (req: FaultRequestInfo) => boolean;
}

/** A rule for requests to come. */
export interface RequestFaultRule {
  match?: FaultMatch;
  /** How many matching requests get the fault (default 1; `Infinity` for all). */
  times?: number;
  /** Let this many matching requests through first (default 0). */
  skip?: number;
  fault: Fault;
  live?: false;
}

/**
 * A watch fault for the watches open now: every open watch that matches gets it at once (its trigger
 * counts from now). When none is open, the next matching watch request gets it, as with an ordinary rule.
 */
export interface LiveFaultRule {
  match?: FaultMatch;
  fault: WatchFault;
  live: true;
}

export type FaultRule = RequestFaultRule | LiveFaultRule;

export interface FaultHandle {
  readonly id: number;
  /** How many requests (or open watches) got the fault so far. */
  readonly hits: number;
  /** Whether the rule can still fire. */
  readonly active: boolean;
  remove(): void;
}

/** An open watch as the injector sees it (implemented by the watch stream). */
export interface OpenWatch {
  readonly info: FaultRequestInfo;
  /** Whether a live fault can still take effect (open, not stalled). */
  readonly acceptsFaults: boolean;
  applyFault(fault: WatchFault, ruleId: number): void;
}

interface Rule {
  id: number;
  match: FaultMatch;
  /** Faults for successive matching requests; `null` lets one through. */
  sequence: (Fault | null)[] | undefined;
  fault: Fault | undefined;
  remaining: number;
  skip: number;
  hits: number;
  seen: number;
  removed: boolean;
}

function matches(m: FaultMatch, fault: Fault | null | undefined, req: FaultRequestInfo): boolean {
  if (fault && !FAULT_KINDS[fault.type].takes(req)) return false;
  if (m.watch !== undefined && m.watch !== req.watch) return false;
  if (m.method !== undefined) {
    const methods = (Array.isArray(m.method) ? m.method : [m.method]).map((x) => x.toUpperCase());
    if (!methods.includes(req.method)) return false;
  }
  if (m.resource !== undefined && m.resource !== req.resource) return false;
  if (m.group !== undefined && m.group !== (req.group ?? '')) return false;
  if (m.namespace !== undefined && m.namespace !== req.namespace) return false;
  if (m.name !== undefined && m.name !== req.name) return false;
  if (m.path !== undefined) {
    if (typeof m.path === 'string' ? m.path !== req.path : !m.path.test(req.path)) return false;
  }
  if (m.predicate && !m.predicate(req)) return false;
  return true;
}

/** The fault rules of one server: `api.faults`. */
export class FaultInjector {
  private rules: Rule[] = [];
  private nextId = 1;
  private readonly openWatches: () => Iterable<OpenWatch>;

  /** `openWatches`: the watches open now, for live rules (the server passes its own; none by default). */
  constructor(openWatches: () => Iterable<OpenWatch> = () => []) {
    this.openWatches = openWatches;
  }

  /**
   * Adds a rule. Rules are consulted in the order added; the first that matches and has a fault to give wins.
   * With `live: true` the watch fault goes to every matching open watch at once (see {@link LiveFaultRule}).
   */
  add(rule: FaultRule): FaultHandle {
    const match = rule.match ?? {};
    if (rule.live === true) {
      const targets = [...this.openWatches()].filter((w) => w.acceptsFaults && matches(match, rule.fault, w.info));
      if (targets.length === 0) return this.push({ match, sequence: undefined, fault: rule.fault, remaining: 1, skip: 0 });
      const id = this.nextId++;
      for (const w of targets) w.applyFault(rule.fault, id);
      return { id, hits: targets.length, active: false, remove: () => undefined };
    }
    return this.push({ match, sequence: undefined, fault: rule.fault, remaining: rule.times ?? 1, skip: rule.skip ?? 0 });
  }

  /**
   * A schedule: the n-th matching request gets `faults[n]` (`null`: no fault). After the
   * last entry the rule is spent. An entry only consumes requests its kind can take
   * (a watch fault: watches; `tooLargeResourceVersion`: lists at a resourceVersion).
   */
  schedule(match: FaultMatch | undefined, faults: readonly (Fault | null)[]): FaultHandle {
    return this.push({
      match: match ?? {},
      sequence: [...faults],
      fault: undefined,
      remaining: faults.length,
      skip: 0,
    });
  }

  private push(r: Omit<Rule, 'id' | 'hits' | 'seen' | 'removed'>): FaultHandle {
    const rule: Rule = { ...r, id: this.nextId++, hits: 0, seen: 0, removed: false };
    this.rules.push(rule);
    return {
      id: rule.id,
      get hits() {
        return rule.hits;
      },
      get active() {
        return !rule.removed && rule.remaining > 0;
      },
      remove: () => {
        rule.removed = true;
        this.rules = this.rules.filter((x) => x !== rule);
      },
    };
  }

  /** Removes every rule. */
  clear(): void {
    for (const r of this.rules) r.removed = true;
    this.rules = [];
  }

  /** Number of rules that can still fire. */
  get pending(): number {
    return this.rules.filter((r) => r.remaining > 0).length;
  }

  /** Picks (and consumes) the fault for a request, if any. */
  take(req: FaultRequestInfo): { fault: Fault; ruleId: number } | undefined {
    for (const rule of this.rules) {
      if (rule.remaining <= 0) continue;
      const candidate = rule.sequence ? rule.sequence[rule.sequence.length - rule.remaining] : rule.fault;
      if (!matches(rule.match, candidate, req)) continue;
      rule.seen++;
      if (rule.seen <= rule.skip) continue;
      rule.remaining--;
      if (candidate === null || candidate === undefined) continue;
      rule.hits++;
      return { fault: candidate, ruleId: rule.id };
    }
    return undefined;
  }
}
