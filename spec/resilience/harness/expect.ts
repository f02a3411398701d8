/**
 * Which errors an informer must report, derived from the server's request
 * log (what each request was answered, which fault it got and whether the
 * fault fired), and a matching of the reported errors against them: every
 * required error reported, every reported error explained.
 */
import type { ErrorReason, InformerError } from '../../../src/index.ts';
import type { Fault, RequestRecord } from 'rx-informer-emulator';
import type { ClientRequest } from './probes.ts';

export interface Expected {
  /** Reasons that satisfy it. */
  readonly reasons: readonly ErrorReason[];
  /** May be absent (explains an error if there is one). */
  readonly optional: boolean;
  readonly why: string;
}

function reasonsForStatus(status: number): ErrorReason[] {
  if (status === 410) return ['Expired', 'Gone'];
  if (status === 401) return ['Unauthorized'];
  if (status === 403) return ['Forbidden'];
  if (status === 404) return ['NotFound'];
  if (status === 400) return ['BadRequest'];
  if (status === 422) return ['Invalid'];
  if (status === 429) return ['TooManyRequests'];
  if (status === 504) return ['Timeout'];
  if (status >= 500) return ['ServerError'];
  return ['Unknown'];
}

/** `#12 watch rv=40 (dropWatch)` */
export function describeRecord(r: RequestRecord): string {
  const q = r.query;
  const parts = [r.watch ? (q['sendInitialEvents'] === 'true' ? 'streaming watch' : 'watch') : 'list'];
  if (q['resourceVersion'] !== undefined) parts.push(`rv=${q['resourceVersion'] || '""'}`);
  if (q['limit'] !== undefined) parts.push(`limit=${q['limit']}`);
  if (q['continue'] !== undefined) parts.push('continue');
  parts.push(`→ ${r.status}`);
  if (r.fault) parts.push(`[${r.fault}]`);
  if (r.watch && r.ended) parts.push(`ended: ${r.ended}, ${r.eventsSent ?? 0} events`);
  return `#${r.seq} ${parts.join(' ')}`;
}

/** A request as the informer saw it: how long it lasted on the informer's clock, and how it ended for the informer. */
export interface ClientView {
  readonly elapsedMs: number | undefined;
  readonly end: ClientRequest['end'];
}

const queryKey = (watch: boolean, q: Readonly<Record<string, unknown>>) =>
  [
    watch,
    ...['resourceVersion', 'timeoutSeconds', 'limit', 'continue'].map((k) => (q[k] === undefined || q[k] === '' ? '' : String(q[k]))),
  ].join('\u0000');

/**
 * Pairs the server's records with the requests the informer made (by seq). The informer makes one
 * request at a time, so both logs are in the same order; a pair must also agree on the query
 * (resourceVersion, timeoutSeconds, limit, continue). A request that never reached the server is skipped.
 */
export function clientViews(records: readonly RequestRecord[], requests: readonly ClientRequest[]): Map<number, ClientView> {
  const out = new Map<number, ClientView>();
  let next = 0;
  for (const r of records) {
    const key = queryKey(r.watch, r.query);
    const at = requests.findIndex((c, i) => i >= next && queryKey(c.watch, c.options) === key);
    if (at < 0) continue;
    const c = requests[at]!;
    out.set(r.seq, { elapsedMs: c.endedAt === undefined ? undefined : c.endedAt - c.startedAt, end: c.end });
    next = at + 1;
  }
  return out;
}

/**
 * How soon a plain watch may end with no event and count as refused (`VeryShortWatch`): the reflector's
 * rule, client-go's 1 s, or half the timeout asked for when that is shorter.
 */
function veryShortWatchMs(r: RequestRecord): number {
  const timeoutSeconds = Number(r.query['timeoutSeconds'] ?? 0);
  return timeoutSeconds > 0 ? Math.min(1000, timeoutSeconds * 500) : 1000;
}

/**
 * Whether the informer, which measured the watch on its own clock, found it very short. The probe's
 * span lies within the informer's (it subscribes after the informer noted the start, and sees the end
 * before the informer), so a span at or past the limit was not very short. A span a hair under the
 * limit may still have been measured over it by the informer (a pause between the two readings): then either.
 */
function veryShort(r: RequestRecord, client: ClientView | undefined): 'yes' | 'no' | 'either' {
  if (client?.elapsedMs === undefined) return 'yes';
  const limit = veryShortWatchMs(r);
  if (client.elapsedMs >= limit) return 'no';
  return client.elapsedMs < limit - 5 ? 'yes' : 'either';
}

export interface ExpectationContext {
  /** Whether `api.closeWatches` ended this watch cleanly (true) or dropped it (false); undefined: it did not. */
  readonly closedByServer?: boolean | undefined;
  /** The harness moved the informer's clock past the stall margin while this stalled watch was open. */
  readonly stallPassed?: boolean;
  /** The request as the informer saw it. */
  readonly client?: ClientView | undefined;
}

/**
 * The errors a request implies. `faultOf` gives the fault a rule id carried
 * (the log records only its type); `maxLineBytes` is the informer's limit.
 */
export function expectedFor(
  r: RequestRecord,
  faultOf: (ruleId: number) => Fault | undefined,
  maxLineBytes: number,
  context: ExpectationContext = {},
): Expected[] {
  const { closedByServer, stallPassed, client } = context;
  const why = describeRecord(r);
  const must = (...reasons: ErrorReason[]): Expected[] => [{ reasons, optional: false, why }];
  // The stall check ran, synchronously, while the watch was open: the informer left it then with a Timeout,
  // before anything the server did to it later (a drop, a clean close) could reach it.
  if (stallPassed) return must('Timeout');
  if (r.status === 0) return must('NetworkError');
  if (r.status >= 400) return must(...reasonsForStatus(r.status));
  if (!r.watch) return [];
  const streaming = r.query['sendInitialEvents'] === 'true';
  if (r.ended === 'expired') return must('Expired');
  const fault = r.faultId === undefined ? undefined : faultOf(r.faultId);
  const fromFault = fault ? expectedFromFault(r, fault, maxLineBytes, why, client) : [];
  // Only the informer aborts a watch before the schedule ends: at a line it could not decode
  // (it resumes from the last resourceVersion processed), or when it judged the watch stalled.
  if (r.ended === 'client') return fromFault.some((x) => x.reasons.includes('MalformedLine')) ? fromFault : must('Timeout');
  if (r.ended !== 'server-close' || closedByServer === undefined) return fromFault;
  // Ended by api.closeWatches: dropped, or a clean end (after events, resume at once; with none, it may have come
  // soon enough to count as very short; a streaming list may not have finished its initial events).
  // A dropped connection may lose what was still unsent, a bad line included.
  // A client that already read the bad line aborted the watch itself and never sees the drop (the server may log
  // the drop first when the abort reaches it late, as on a loaded machine): either error then explains the end.
  if (!closedByServer && fromFault.some((x) => x.reasons.includes('MalformedLine'))) {
    return [
      { reasons: ['MalformedLine', 'NetworkError'], optional: false, why },
      { reasons: ['MalformedLine', 'NetworkError'], optional: true, why },
    ];
  }
  if (!closedByServer) return [...fromFault.map((x) => ({ ...x, optional: true })), ...must('NetworkError')];
  if (streaming) return [...fromFault, { reasons: ['WatchError', 'VeryShortWatch'], optional: true, why }];
  return (r.eventsSent ?? 0) === 0 ? [...fromFault, { reasons: ['VeryShortWatch'], optional: true, why }] : fromFault;
}

/** The errors a watch fault implies, once the watch got going. */
function expectedFromFault(r: RequestRecord, fault: Fault, maxLineBytes: number, why: string, client: ClientView | undefined): Expected[] {
  const must = (...reasons: ErrorReason[]): Expected[] => [{ reasons, optional: false, why }];
  const streaming = r.query['sendInitialEvents'] === 'true';
  const reached = !('afterEvents' in fault) || fault.afterEvents === undefined || (r.eventsSent ?? 0) >= fault.afterEvents;
  switch (fault.type) {
    case 'dropWatch':
      return r.ended === 'fault' ? must('NetworkError') : [];
    case 'expireWatch':
      return r.ended === 'fault' ? must('Expired') : [];
    case 'closeWatch':
      if (r.ended !== 'fault') return [];
      if (fault.afterEvents === undefined) {
        if (streaming) return must('WatchError');
        // At once, with no event: very short, if the informer saw it end soon enough (a loaded machine may take longer).
        const short = veryShort(r, client);
        return short === 'yes' ? must('VeryShortWatch') : short === 'either' ? [{ reasons: ['VeryShortWatch'], optional: true, why }] : [];
      }
      // After events: a clean end after real work (no error), unless a streaming list had not finished its initial events.
      return streaming ? [{ reasons: ['WatchError'], optional: true, why }] : [];
    case 'malformedLine':
      return reached ? must('MalformedLine') : [];
    case 'oversizeLine':
      return reached && (fault.bytes ?? 3 * 1024 * 1024) > maxLineBytes ? must('MalformedLine') : [];
    default:
      return [];
  }
}

/** Whether a request's fault took effect (a watch fault may wait for events that never came, or meet an expired watch). */
export function faultFired(r: RequestRecord, fault: Fault): boolean {
  switch (fault.type) {
    case 'dropWatch':
    case 'closeWatch':
    case 'expireWatch':
      return r.ended === 'fault';
    case 'stallWatch':
    case 'malformedLine':
    case 'oversizeLine':
      return r.ended !== 'expired' && (fault.afterEvents === undefined || (r.eventsSent ?? 0) >= fault.afterEvents);
    case 'slowWatch':
      return r.ended !== 'expired';
    default:
      return true;
  }
}

export interface Matching {
  /** Required errors nobody reported. */
  readonly missing: string[];
  /** Reported errors nothing explains. */
  readonly unexplained: string[];
}

/**
 * Matches reported errors to expectations (a bipartite matching by reason):
 * required expectations first, then the remaining errors, so that an error
 * explains at most one expectation and required ones are never displaced.
 */
export function matchErrors(expected: readonly Expected[], errors: readonly InformerError[]): Matching {
  const errorOf = new Array<number>(expected.length).fill(-1);
  const expectationOf = new Array<number>(errors.length).fill(-1);
  const fits = (e: number, x: number) => expected[x]!.reasons.includes(errors[e]!.reason);

  // Augmenting path from expectation x.
  const fromExpected = (x: number, seen: Set<number>): boolean => {
    for (let e = 0; e < errors.length; e++) {
      if (!fits(e, x) || seen.has(e)) continue;
      seen.add(e);
      if (expectationOf[e] === -1 || fromExpected(expectationOf[e]!, seen)) {
        expectationOf[e] = x;
        errorOf[x] = e;
        return true;
      }
    }
    return false;
  };
  // Augmenting path from error e (keeps every matched expectation matched).
  const fromError = (e: number, seen: Set<number>): boolean => {
    for (let x = 0; x < expected.length; x++) {
      if (!fits(e, x) || seen.has(x)) continue;
      seen.add(x);
      if (errorOf[x] === -1 || fromError(errorOf[x]!, seen)) {
        errorOf[x] = e;
        expectationOf[e] = x;
        return true;
      }
    }
    return false;
  };

  expected.forEach((x, i) => {
    if (!x.optional) fromExpected(i, new Set());
  });
  errors.forEach((_, e) => {
    if (expectationOf[e] === -1) fromError(e, new Set());
  });
  return {
    missing: expected.flatMap((x, i) => (!x.optional && errorOf[i] === -1 ? [`${x.reasons.join(' or ')} for ${x.why}`] : [])),
    unexplained: errors.flatMap((error, e) =>
      expectationOf[e] === -1 ? [`${error.reason} (${error.phase ?? '?'}): ${error.message.slice(0, 160)}`] : [],
    ),
  };
}
