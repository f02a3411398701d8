/**
 * Leader election as a pure, time-free state machine: it is told what was
 * observed and when (by the candidate's own clock), and answers which request
 * to send next. No timers, no I/O: `leaderElection.ts` does those.
 *
 * Two clocks: `now` (every duration, deadline and expiry) is a monotonic one by default (`monotonicNow`, as client-go
 * compares Go's monotonic readings), so a step of the wall clock (NTP, `date -s`) neither keeps a leader past its
 * renew deadline nor lets a candidate take over early; `wall` (`Date.now()`) is written into the Lease
 * (`acquireTime`, `renewTime`), where nobody compares it, and its gain on `now` is read as time suspended (the
 * monotonic clock stops while the host sleeps: see `leading`). A scheduler passed in is both.
 *
 * The rules are client-go's (tools/leaderelection), but for the renew deadline's start:
 * - A candidate may take a Lease held by someone else only once it has seen
 *   the same record for a whole lease duration by its own clock, counted from
 *   when it *received* the record (a record is never older than its arrival).
 * - A released Lease (holderIdentity "") or a missing one is taken at once.
 * - The holder leads until `renewDeadline` after the *start* of its last
 *   successful write (a write lands after it starts, so this is on the safe side),
 *   and not a moment after a read shows someone else holding the Lease. client-go leads until a retry period plus
 *   `renewDeadline` after its last success *ended* (~12 s of outage ridden out, 8 s here): ours keeps the whole
 *   `leaseDuration − renewDeadline` between stepping down and a takeover (docs/replicas.md).
 * - Every write quotes the resourceVersion it read: two candidates racing for
 *   one record cannot both win (the loser gets 409 Conflict).
 * Hence no two leaders at once, as long as leaseDuration > renewDeadline by
 * more than the clocks can drift apart over a lease duration (see docs/replicas.md).
 */
import { microTime, sameRecord, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';

export interface ElectionTiming {
  /** How long a candidate waits, unchanged record in view, before taking the Lease. Default 15 000. */
  readonly leaseDurationMs: number;
  /** How long the leader goes on leading without a successful renewal. Default 10 000. */
  readonly renewDeadlineMs: number;
  /** Time between attempts (renewals, and acquisitions while candidate). Default 2 000. */
  readonly retryPeriodMs: number;
}

/** client-go's and controller-runtime's defaults. */
export const DEFAULT_TIMING: ElectionTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** client-go's JitterFactor: renewDeadline must exceed retryPeriod times this. */
export const JITTER_FACTOR = 1.2;

/** Why a timing is refused (client-go's checks), or undefined when it is sound. */
export function timingProblem(t: ElectionTiming): string | undefined {
  if (!(t.leaseDurationMs > 0)) return 'leaseDurationMs must be greater than zero';
  // A Lease holds whole seconds (leaseDurationSeconds), and client-go's durations in seconds (15) are the likely slip.
  if (t.leaseDurationMs < 1_000)
    return `leaseDurationMs must be at least 1000 (a Lease holds whole seconds), got ${t.leaseDurationMs}: milliseconds, not seconds`;
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) return 'leaseDurationMs must be greater than renewDeadlineMs';
  if (!(t.renewDeadlineMs > JITTER_FACTOR * t.retryPeriodMs))
    return `renewDeadlineMs must be greater than retryPeriodMs × ${JITTER_FACTOR}`;
  return undefined;
}

/**
 * Why a `requestTimeoutMs` is refused (undefined: the default), or undefined when it is sound: a positive finite number
 * of ms. 0, a negative or NaN would time every request out at once (or, read as "not set", give the default: one reading).
 */
export function requestTimeoutProblem(requestTimeoutMs: unknown): string | undefined {
  if (requestTimeoutMs === undefined) return undefined;
  if (typeof requestTimeoutMs === 'number' && Number.isFinite(requestTimeoutMs) && requestTimeoutMs > 0) return undefined;
  const got = typeof requestTimeoutMs === 'number' ? String(requestTimeoutMs) : typeof requestTimeoutMs;
  return `\`requestTimeoutMs\` must be a positive number of milliseconds (or left out: renewDeadlineMs / 2), got ${got}`;
}

/** A Lease request's timeout: the option, or half the renew deadline (two tries fit in one), for every Lease request. */
export const leaseRequestTimeoutMs = (requestTimeoutMs: number | undefined, timing: ElectionTiming): number =>
  requestTimeoutMs ?? timing.renewDeadlineMs / 2;

export interface ElectionState {
  /** The Lease as last read or written: undefined before the first read, null when there was none. */
  readonly observed: LeaseSnapshot | null | undefined;
  /** Local time the observed record last changed (or was first seen). */
  readonly observedAt: number;
  /** Local time until which we lead: `renewDeadline` after the start of our last successful write. */
  readonly leaderUntil: number;
  /**
   * The wall clock minus the local one when that write started (0 when they are one clock): how far the wall clock
   * runs ahead of the local one later tells how long we were suspended since (see {@link leading}).
   */
  readonly wallAhead: number;
}

export const initialElection: ElectionState = {
  observed: undefined,
  observedAt: Number.NEGATIVE_INFINITY,
  leaderUntil: Number.NEGATIVE_INFINITY,
  wallAhead: 0,
};

/** What to send next. */
export type LeaseRequest =
  | { readonly type: 'get' }
  | { readonly type: 'create'; readonly record: LeaderElectionRecord }
  | {
      readonly type: 'update';
      readonly purpose: 'renew' | 'acquire' | 'release';
      readonly resourceVersion: string;
      readonly record: LeaderElectionRecord;
    };

export interface Candidate {
  readonly identity: string;
  readonly timing: ElectionTiming;
}

/**
 * Whether we lead at local time `now`, wall time `wall` (default: one clock). The renew deadline counts time the local
 * clock did not see: on Linux the monotonic clock stops while the host is suspended (a laptop's sleep, a paused VM)
 * and the wall clock is set forward on resume, so whatever the wall clock gained on the local one since our last
 * write started is counted too. A peer may take the Lease a lease duration after it saw that write, by its own clock,
 * which a suspend does not stop: without this a leader resumed inside its old deadline would lead on beside it. A
 * forward step of the wall clock looks the same and steps a leader down early (it renews at its next attempt if the
 * Lease is still its own); a backward one changes nothing.
 */
export const leading = (state: ElectionState, now: number, wall = now): boolean =>
  now + Math.max(0, wall - now - state.wallAhead) < state.leaderUntil;

const holder = (state: ElectionState): string | undefined => state.observed?.record.holderIdentity;

/** The record we write to hold the Lease at wall time `wall` (in `acquireTime`/`renewTime`). */
function holding(candidate: Candidate, previous: LeaderElectionRecord | undefined, wall: number): LeaderElectionRecord {
  const time = microTime(wall);
  const keep = previous !== undefined && previous.holderIdentity === candidate.identity;
  return {
    holderIdentity: candidate.identity,
    leaseDurationSeconds: Math.ceil(candidate.timing.leaseDurationMs / 1000),
    acquireTime: keep ? (previous.acquireTime ?? time) : time,
    renewTime: time,
    leaseTransitions: previous === undefined ? 0 : keep ? previous.leaseTransitions : previous.leaseTransitions + 1,
  };
}

/**
 * The first request of an attempt at `now`: the leader renews straight away
 * with the resourceVersion it wrote last (client-go's fast path); anyone else reads first. `wall`: the wall time
 * written into the record (default `now`).
 */
export function begin(state: ElectionState, now: number, candidate: Candidate, want: boolean, wall = now): LeaseRequest {
  const observed = state.observed;
  if (want && observed && leading(state, now, wall) && observed.record.holderIdentity === candidate.identity) {
    return {
      type: 'update',
      purpose: 'renew',
      resourceVersion: observed.resourceVersion,
      record: holding(candidate, observed.record, wall),
    };
  }
  return { type: 'get' };
}

/** Records what was read at `now` (the local time the response arrived). */
export function observe(state: ElectionState, read: LeaseSnapshot | null, now: number): ElectionState {
  const before = state.observed;
  const changed = read === null || before === undefined || before === null || !sameRecord(before.record, read.record);
  return { ...state, observed: read, observedAt: changed ? now : state.observedAt };
}

/** Local time at which the observed holder's claim lapses for us (−∞ when free, +∞ never). */
export function expiresAt(state: ElectionState, identity: string): number {
  const observed = state.observed;
  if (!observed || observed.record.holderIdentity === '' || observed.record.holderIdentity === identity) return Number.NEGATIVE_INFINITY;
  return state.observedAt + observed.record.leaseDurationSeconds * 1000;
}

/**
 * After a successful read at `now` (wall time `wall`, written into the record): the new state and the write to send,
 * if any. A Lease held by someone else is not ours, whatever our deadline says: we stop leading at once (client-go's
 * `IsLeader()` compares the holder read with its identity). Our deadline alone would keep a leader that was suspended
 * (its clock stopped while a peer took over) leading beside the peer until that deadline.
 */
export function afterRead(
  state: ElectionState,
  read: LeaseSnapshot | null,
  now: number,
  candidate: Candidate,
  want: boolean,
  wall = now,
): { readonly state: ElectionState; readonly next: LeaseRequest | undefined } {
  const seen = observe(state, read, now);
  const taken = read !== null && read.record.holderIdentity !== '' && read.record.holderIdentity !== candidate.identity;
  const next = taken ? stepDown(seen) : seen;
  if (!want) return { state: next, next: undefined };
  if (read === null) return { state: next, next: { type: 'create', record: holding(candidate, undefined, wall) } };
  if (expiresAt(next, candidate.identity) > now) return { state: next, next: undefined };
  const purpose = read.record.holderIdentity === candidate.identity ? 'renew' : 'acquire';
  return {
    state: next,
    next: { type: 'update', purpose, resourceVersion: read.resourceVersion, record: holding(candidate, read.record, wall) },
  };
}

/** After a successful write that started at `startedAt` (wall time `startedWall`, default: one clock), answered at `now`. */
export function afterWrite(
  state: ElectionState,
  written: LeaseSnapshot,
  startedAt: number,
  now: number,
  candidate: Candidate,
  startedWall = startedAt,
): ElectionState {
  const mine = written.record.holderIdentity === candidate.identity;
  return {
    observed: written,
    observedAt: now,
    leaderUntil: mine ? startedAt + candidate.timing.renewDeadlineMs : Number.NEGATIVE_INFINITY,
    wallAhead: startedWall - startedAt,
  };
}

/** Stop leading now (before a release, or when told to). */
export function stepDown(state: ElectionState): ElectionState {
  return { ...state, leaderUntil: Number.NEGATIVE_INFINITY };
}

/**
 * The write that hands the Lease back (client-go's ReleaseOnCancel: holder
 * emptied, leaseDurationSeconds 1), when the Lease as we know it is ours. `wall`: the wall time written into it.
 */
export function release(state: ElectionState, wall: number, identity: string): LeaseRequest | undefined {
  const observed = state.observed;
  if (!observed || holder(state) !== identity) return undefined;
  const time = microTime(wall);
  return {
    type: 'update',
    purpose: 'release',
    resourceVersion: observed.resourceVersion,
    record: {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: time,
      renewTime: time,
      leaseTransitions: observed.record.leaseTransitions,
    },
  };
}

/**
 * How long to wait before the next attempt: a retry period (stretched by
 * `jitter` in [0, 1) × `jitterFactor` while a candidate), but never past the
 * moment the observed holder's claim lapses, so a dead leader is replaced
 * within a lease duration of our last sight of its record.
 */
/** The shortest timer the election sets: a shorter one could fire at the same virtual instant forever. */
export const MIN_WAKE_MS = 1;

export function nextAttemptIn(state: ElectionState, now: number, candidate: Candidate, jitter: number, jitterFactor: number): number {
  const retry = candidate.timing.retryPeriodMs;
  if (leading(state, now)) return retry;
  const wait = retry * (1 + jitter * jitterFactor);
  const lapse = expiresAt(state, candidate.identity) - now;
  // lapse ≤ 0: already lapsed and this attempt failed anyway; wait a full period. At least
  // 1 ms: a lapse a float step above 0 would wake at the same virtual instant, forever.
  return lapse > 0 && lapse < wait ? Math.max(lapse, MIN_WAKE_MS) : wait;
}

/** How many of our last writes' `renewTime`s are remembered: some renew deadlines' worth of writes whose answer was lost. */
export const MAX_OWN_WRITES = 16;

/**
 * What a candidate remembers of its own writes, to tell a second candidate with its identity (a misuse client-go
 * documents but does not report: both lead, each taking the other's record for its own): the `renewTime`s it sent
 * (answered or not: a write whose answer was lost may still have landed), and whether it has said so already.
 */
export interface OwnWrites {
  readonly renewTimes: readonly string[];
  readonly told: boolean;
}

export const noOwnWrites: OwnWrites = { renewTimes: [], told: false };

/** A write is sent: its `renewTime` is ours from now on (the last {@link MAX_OWN_WRITES} kept). */
export function sentWrite(own: OwnWrites, request: LeaseRequest): OwnWrites {
  if (request.type === 'get' || request.record.renewTime === undefined) return own;
  return { ...own, renewTimes: [...own.renewTimes, request.record.renewTime].slice(-MAX_OWN_WRITES) };
}

/**
 * After our renewal was refused (409) and the Lease read again: whether it shows our identity in a record we never
 * sent (its `renewTime` is none of ours), so another candidate uses our identity. True once (`told` from then on):
 * the misuse goes on at every renewal, and one report says it.
 */
export function sharedIdentity(
  own: OwnWrites,
  read: LeaseSnapshot | null,
  identity: string,
): { readonly own: OwnWrites; readonly shared: boolean } {
  if (own.told || read === null || read.record.holderIdentity !== identity) return { own, shared: false };
  const renewTime = read.record.renewTime;
  if (renewTime !== undefined && own.renewTimes.includes(renewTime)) return { own, shared: false };
  return { own: { ...own, told: true }, shared: true };
}
