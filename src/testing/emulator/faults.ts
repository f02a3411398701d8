/**
 * Fault injection. Faults are plain data (easy to generate in property-based
 * tests); rules pick which requests get them, each use is recorded in the
 * request log.
 */

/** A fault for any request (watch or not). */
export type RequestFault =
  /** Answer with this HTTP status and a Status body; 429 carries `Retry-After` (default 1 s). */
  | { type: 'status'; code: number; retryAfterSeconds?: number; message?: string; reason?: string }
  /** Destroy the connection without any response. */
  | { type: 'reset' }
  /** Handle the request normally after a delay. */
  | { type: 'delay'; ms: number };

/** Where a watch fault triggers: after `afterEvents` ADDED/MODIFIED/DELETED lines or `afterMs`, whichever first; neither: at once. */
export interface WatchTrigger {
  afterEvents?: number;
  afterMs?: number;
}

/** A fault that only applies to watch requests. */
export type WatchFault =
  /** Destroy the socket: no terminating chunk (the client sees an aborted body). */
  | ({ type: 'dropWatch' } & WatchTrigger)
  /** Stop writing (events, bookmarks, timeout) but keep the socket open until the client aborts or the server closes. */
  | ({ type: 'stallWatch' } & WatchTrigger)
  /** Write one line that is not JSON, then carry on. */
  | ({ type: 'malformedLine'; line?: string } & WatchTrigger)
  /** Write one JSON line of about `bytes` bytes (default 3 MiB): a BOOKMARK padded with an annotation. Then carry on. */
  | ({ type: 'oversizeLine'; bytes?: number } & WatchTrigger)
  /** End the response cleanly (terminating chunk). With no trigger: a very short, empty watch. */
  | ({ type: 'closeWatch' } & WatchTrigger)
  /** Write an ERROR line with a 410 Expired Status, then end the response (like 04a). */
  | ({ type: 'expireWatch' } & WatchTrigger)
  /** Write the whole response in `chunkBytes` pieces every `delayMs` (defaults 64 B / 5 ms). */
  | { type: 'slowWatch'; chunkBytes?: number; delayMs?: number };

export type Fault = RequestFault | WatchFault;
export type FaultType = Fault['type'];

/** Every fault type, handy for generators (`fc.constantFrom(...FAULT_TYPES)`). */
export const FAULT_TYPES: readonly FaultType[] = [
  'status',
  'reset',
  'delay',
  'dropWatch',
  'stallWatch',
  'malformedLine',
  'oversizeLine',
  'closeWatch',
  'expireWatch',
  'slowWatch',
];

const WATCH_ONLY = new Set<FaultType>([
  'dropWatch',
  'stallWatch',
  'malformedLine',
  'oversizeLine',
  'closeWatch',
  'expireWatch',
  'slowWatch',
]);

export function isWatchFault(f: Fault): f is WatchFault {
  return WATCH_ONLY.has(f.type);
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

export interface FaultRule {
  match?: FaultMatch;
  /** How many matching requests get the fault (default 1; `Infinity` for all). */
  times?: number;
  /** Let this many matching requests through first (default 0). */
  skip?: number;
  fault: Fault;
}

export interface FaultHandle {
  readonly id: number;
  /** How many requests got the fault so far. */
  readonly hits: number;
  /** Whether the rule can still fire. */
  readonly active: boolean;
  remove(): void;
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
  const watchOnly = fault ? isWatchFault(fault) : false;
  if (watchOnly && !req.watch) return false;
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

  /** Adds a rule. Rules are consulted in the order added; the first that matches and has a fault to give wins. */
  add(rule: FaultRule): FaultHandle {
    return this.push({
      match: rule.match ?? {},
      sequence: undefined,
      fault: rule.fault,
      remaining: rule.times ?? 1,
      skip: rule.skip ?? 0,
    });
  }

  /**
   * A schedule: the n-th matching request gets `faults[n]` (`null`: no fault). After the
   * last entry the rule is spent. Watch faults in a schedule only consume watch requests.
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
