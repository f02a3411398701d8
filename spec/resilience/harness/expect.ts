/**
 * Which errors an informer must report, derived from the server's request
 * log (what each request was answered, which fault it got and whether the
 * fault fired), and a matching of the reported errors against them: every
 * required error reported, every reported error explained.
 */
import type { ErrorReason, InformerError } from '../../../src/index.ts';
import type { Fault, RequestRecord } from 'rx-informer-emulator';

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

/**
 * The errors a request implies. `faultOf` gives the fault a rule id carried
 * (the log records only its type); `maxLineBytes` is the informer's limit;
 * `closedByServer` says whether `api.closeWatches` ended this watch cleanly (true) or dropped it (false).
 */
export function expectedFor(
  r: RequestRecord,
  faultOf: (ruleId: number) => Fault | undefined,
  maxLineBytes: number,
  closedByServer?: boolean,
): Expected[] {
  const why = describeRecord(r);
  const must = (...reasons: ErrorReason[]): Expected[] => [{ reasons, optional: false, why }];
  if (r.status === 0) return must('NetworkError');
  if (r.status >= 400) return must(...reasonsForStatus(r.status));
  if (!r.watch) return [];
  const streaming = r.query['sendInitialEvents'] === 'true';
  if (r.ended === 'expired') return must('Expired');
  const fault = r.faultId === undefined ? undefined : faultOf(r.faultId);
  const fromFault = fault ? expectedFromFault(r, fault, maxLineBytes, why) : [];
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
function expectedFromFault(r: RequestRecord, fault: Fault, maxLineBytes: number, why: string): Expected[] {
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
      if (fault.afterEvents === undefined) return must(streaming ? 'WatchError' : 'VeryShortWatch');
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
