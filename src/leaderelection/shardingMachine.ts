/**
 * Who should hold which shard, as a pure, time-free state machine: `sharding()` (the shell) tells it what a listing of
 * the member Leases showed, whether our own member Lease and each shard's Lease are held, when in-flight work drained,
 * and when a timer it asked for fired, with the time by its own clock; it answers with effects as data (want a shard's
 * Lease or not, announce a shard acquired or lost, report the status, arm the recheck timer, release a lapsed member's
 * Lease). No timers, no I/O.
 *
 * The rules (each a row of `spec/leaderelection/shardingMachine.spec.ts`):
 * - A member is alive while its Lease's record changes within its lease duration, by our clock, counted from when a
 *   listing first showed the record (client-go's observed-time rule; `renewTime` is never compared with our clock).
 *   A released record (holder "") is nobody. We are always a member.
 * - The members give the shards by capped rendezvous hashing; a shard is *assigned* to us when it is ours by that
 *   view (nothing is assigned before the first listing), *held* when it is ours and its Lease is ours.
 * - We want a shard's Lease while it is assigned to us, and keep a held one that is no longer ours until its in-flight
 *   work has drained, or for `handoverDrainMs` at most (then that work is cancelled, as at a lost lead, and it is let go).
 * - Frozen: while our own member Lease is not renewed (its writes failed for a renew deadline) nobody is dropped from
 *   the view; new members still join. Renewed again, every member still in the view gets a lease duration from then.
 * - A member lapsed for us (not frozen) has its Lease released, once per resourceVersion seen: holder "", quoting the
 *   resourceVersion we saw unchanged for that lease duration, so a replica seeing the record for the first time does
 *   not count a dead member alive for a lease duration of its own. After a 409 that resourceVersion is not tried again.
 * - A member's lapse is found the moment it happens (a recheck timer), when that comes before the next listing.
 * - A listing sent no later than the listing that showed a member Lease's record (or than our release of it was
 *   written) does not replace it: an answer out of order, or one read before our release (it would bring a dead
 *   member back).
 * - Bounded, whatever the Leases say: a member Lease whose `holderIdentity` is longer than {@link MAX_IDENTITY_LENGTH}
 *   is ignored (reported once while it is listed); at most {@link MAX_MEMBERS} members count, the first by identity
 *   (us always among them; reported once each time the view grows past it); the assignment is computed again only when
 *   the members change; a member Lease no longer listed is forgotten once it lapsed, or after our lease duration (a
 *   deleted one: nobody); a member counts for at most {@link MEMBER_LEASE_FACTOR} × our lease duration (longer reported once).
 * - A live Lease of the group (member or shard) whose `SHARDS_LABEL` names another count pauses us: no shard is ours
 *   (none assigned, held ones let go once drained), reported once as it starts, until every such Lease is released or lapsed.
 * - A stale member Lease is deleted (when `staleMemberMs` is set: the clients can delete): released (holder "") and its
 *   record unchanged for `staleMemberMs` by our clock since a listing first showed it, never our own, by the replica
 *   whose identity sorts first among the live members (one replica sends the requests), not frozen, quoting the
 *   resourceVersion seen (a Lease renewed or taken meanwhile is not deleted). At most {@link MAX_MEMBER_DELETES} in
 *   flight; a 409 or 404 (a lost race) is not tried again for that resourceVersion, another failure stops every
 *   deletion for {@link MEMBER_DELETE_RETRY_MS} (then tried again). A deleted Lease is forgotten at once.
 */
import { assignShards } from './hash.ts';
import { MIN_WAKE_MS } from './machine.ts';
import { microTime, sameRecord, SHARDS_LABEL, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';
import { sameSet } from '../util/keeping.ts';

/**
 * The longest `holderIdentity` counted as a member: a member's own Lease is named `<name>-member-<identity>`, a
 * Kubernetes object name (a DNS subdomain, at most 253 characters), so no member that can name its Lease has a longer
 * one. (The API server does not bound `holderIdentity` itself: a hostile Lease could carry a megabyte, hashed for
 * every shard at every recount.)
 */
export const MAX_IDENTITY_LENGTH = 253;

/**
 * The most members counted: the first by identity (sorted, us always kept). Assigning costs shards × members hashes
 * (about 100 ms at 256 shards and this many), paid only when the members change.
 */
export const MAX_MEMBERS = 1_024;

/**
 * The least time a member Lease stays released and unchanged before it is deleted (`sharding()` waits 10 lease
 * durations, at least this): well past a replica's restart under its old identity (which takes its released Lease
 * back within a retry period) and a crash-looping pod's back-off (at most 5 minutes), while a pod that comes back
 * after its Lease is gone creates it again.
 */
export const STALE_MEMBER_MS = 5 * 60_000;

/** The most member Lease deletions in flight at once (a backlog of thousands is deleted over some listings). */
export const MAX_MEMBER_DELETES = 32;

/** After a deletion failed otherwise than by a lost race (a 5xx, a timeout, a Forbidden), none is sent for this long. */
export const MEMBER_DELETE_RETRY_MS = 60_000;

export { SHARDS_LABEL } from './record.ts';

/**
 * A member Lease's `leaseDurationSeconds` counts for at most this many of our own lease durations (60 s at the
 * defaults): a peer configured with a longer lease than ours still counts as it asks, while a hostile or mistaken one
 * (2,000,000,000 s) would keep a phantom member, and its shards unheld, for ever. Counting a member dead early moves
 * only the assignment: the shard Leases still keep every key to one holder.
 */
export const MEMBER_LEASE_FACTOR = 4;

/** What one replica holds, for metrics. */
export interface ShardStatus {
  readonly name: string;
  readonly identity: string;
  readonly shards: number;
  /** The shards we may reconcile now. */
  readonly held: ReadonlySet<number>;
  /**
   * The shards the rendezvous assignment gives us, as we see the members (empty until we have
   * listed them once): the ones we campaign for, and `held` once their Leases are taken. Only a
   * listing changes the view: a member lapses once a listing shows its Lease unrenewed for a lease
   * duration; a replica whose listings fail keeps the view it had, and one whose own member Lease
   * is not renewed drops nobody (while its Lease writes fail its assignment gains a shard only as a member joins).
   */
  readonly assigned: ReadonlySet<number>;
  /** The live members as we see them (us included). */
  readonly members: readonly string[];
  /** Whether the members have been listed once: until then `assigned` is empty and says nothing. */
  readonly listed: boolean;
}

export interface ShardingConfig {
  /** The group: Lease names `<name>-member-<identity>`, and the salt of the hashing. */
  readonly name: string;
  readonly identity: string;
  readonly shards: number;
  readonly retryPeriodMs: number;
  /**
   * Our own lease duration (ms): a member Lease counts for at most {@link MEMBER_LEASE_FACTOR} times it (a longer
   * `leaseDurationSeconds` is reported once), and one no longer listed for at most it. Undefined: no bound.
   */
  readonly leaseDurationMs?: number | undefined;
  /** How long a member Lease stays released and unchanged before it is deleted; undefined: never (the clients cannot delete). */
  readonly staleMemberMs?: number | undefined;
  /**
   * How long a shard handed over (no longer ours, still held) waits for its in-flight work before it is let go anyway,
   * that work cancelled; undefined: no bound.
   */
  readonly handoverDrainMs?: number | undefined;
}

/** A member Lease as last seen changing. */
export interface Sighting {
  readonly record: LeaderElectionRecord;
  readonly resourceVersion: string;
  /** Our clock when a listing first showed this record. */
  readonly at: number;
  /**
   * What a listing must have been sent after to replace this record: when the listing that showed it was sent, or
   * when our release was written (a listing sent no later may have been read before it).
   */
  readonly asOf: number;
}

export interface ShardingState {
  /** Member Lease name → its record as last seen changing (listed, or not yet lapsed). */
  readonly seen: ReadonlyMap<string, Sighting>;
  /** Member Leases of the last listing whose lease duration is past our bound (see {@link MEMBER_LEASE_FACTOR}; each reported once). */
  readonly overlong?: ReadonlySet<string>;
  /** Member Leases of the last listing ignored for an identity past {@link MAX_IDENTITY_LENGTH} (each reported once). */
  readonly ignored: ReadonlySet<string>;
  /** Whether the live members were more than {@link MAX_MEMBERS} at the last recount (reported when it turns true). */
  readonly crowded: boolean;
  /** The live members as we see them (sorted, us included). */
  readonly members: readonly string[];
  /** Who should hold each shard, by `members`. */
  readonly owners: readonly string[];
  /** Whether a listing has answered once. */
  readonly listed: boolean;
  /**
   * The group's Leases (member and shard) last listed with another shard count in {@link SHARDS_LABEL}, as last seen
   * changing: while one is held and not lapsed we campaign for no shard (see `paused`).
   */
  readonly foreign: ReadonlyMap<string, Sighting & { readonly shards: string }>;
  /** Why we hold no shard now: a live Lease of the group counting other shards (reported when it turns set). */
  readonly paused: string | undefined;
  /** Whether our own member Lease is renewed (we lead it). */
  readonly renewing: boolean;
  /** Whether we hold each shard's Lease. */
  readonly leading: readonly boolean[];
  /** Whether we asked for each shard's Lease. */
  readonly wanted: readonly boolean[];
  /** For each shard being handed over (held, no longer ours, work in flight): since when, by our clock. */
  readonly handingOver?: readonly (number | undefined)[];
  /** The shards we may reconcile: held and ours. */
  readonly held: ReadonlySet<number>;
  /** `<lease>@<resourceVersion>` of the member Leases we released or are releasing. */
  readonly releasing: ReadonlySet<string>;
  /** `<lease>@<resourceVersion>` of the member Leases we are deleting (`sent`) or lost the race to delete (`lost`). */
  readonly deleting: ReadonlyMap<string, 'sent' | 'lost'>;
  /** No deletion is sent before this time (after one failed). */
  readonly deletePausedUntil: number;
  /** The status last reported. */
  readonly reported: ShardStatus | undefined;
}

export type ShardingInput =
  /**
   * A listing of the group's Leases answered. `startedAt`: when it was sent, by our clock (undefined: it is not
   * older than anything seen; see `Sighting.asOf`).
   */
  | { readonly type: 'listed'; readonly leases: readonly LeaseSnapshot[]; readonly startedAt?: number }
  /** Our own member Lease: led (renewed) or not. */
  | { readonly type: 'renewing'; readonly lead: boolean }
  /** A shard's election: we lead its Lease or not. */
  | { readonly type: 'leading'; readonly shard: number; readonly lead: boolean }
  /** In-flight work of a shard finished (`busy` says which shards still have some). */
  | { readonly type: 'drained' }
  /** The recheck timer fired. */
  | { readonly type: 'recheck' }
  /** Our release of a lapsed member's Lease (quoting `resourceVersion`) was written. */
  | { readonly type: 'memberReleased'; readonly lease: string; readonly resourceVersion: string; readonly written: LeaseSnapshot }
  /** It failed; after a Conflict it is not tried again for that resourceVersion. */
  | { readonly type: 'memberReleaseFailed'; readonly lease: string; readonly resourceVersion: string; readonly conflict: boolean }
  /** Our deletion of a stale member Lease (quoting `resourceVersion`) was done. */
  | { readonly type: 'memberDeleted'; readonly lease: string; readonly resourceVersion: string }
  /** It failed; `lostRace`: a 409 or 404 (renewed, taken or deleted meanwhile), not tried again for that resourceVersion. */
  /** `lostRace`: a 409 or 404 (renewed, re-taken or deleted meanwhile); `forbidden`: a 403 (no `delete` on leases: none sent again). */
  | {
      readonly type: 'memberDeleteFailed';
      readonly lease: string;
      readonly resourceVersion: string;
      readonly lostRace: boolean;
      readonly forbidden?: boolean;
    };

export type ShardingEffect =
  /** Campaign for the shard's Lease, or stop (stepping down and releasing it if held). */
  | { readonly type: 'want'; readonly shard: number; readonly want: boolean }
  /** A shard we held is lost, or its handover's drain bound passed: cancel its in-flight work. */
  | { readonly type: 'lost'; readonly shard: number }
  | { readonly type: 'acquired'; readonly shard: number }
  | { readonly type: 'status'; readonly status: ShardStatus }
  /** Fire `recheck` in `inMs` (replacing any timer armed before); undefined: none. */
  | { readonly type: 'recheck'; readonly inMs: number | undefined }
  /** Write this record on the member Lease, quoting `resourceVersion`. */
  | { readonly type: 'releaseMember'; readonly lease: string; readonly resourceVersion: string; readonly record: LeaderElectionRecord }
  /** Delete the member Lease, quoting `resourceVersion` as a precondition. */
  | { readonly type: 'deleteMember'; readonly lease: string; readonly resourceVersion: string }
  /** A listing broke a bound (see {@link MAX_IDENTITY_LENGTH}, {@link MAX_MEMBERS}): report it (`ValidationFailed`). */
  | { readonly type: 'invalid'; readonly lease: string; readonly message: string };

export interface ShardingStep {
  readonly state: ShardingState;
  readonly effects: readonly ShardingEffect[];
}

export function initialSharding(config: ShardingConfig): ShardingState {
  const members = [config.identity];
  return {
    seen: new Map(),
    ignored: new Set(),
    crowded: false,
    members,
    owners: assignShards(config.shards, members, config.name),
    listed: false,
    foreign: new Map(),
    paused: undefined,
    renewing: false,
    leading: new Array<boolean>(config.shards).fill(false),
    wanted: new Array<boolean>(config.shards).fill(false),
    held: new Set(),
    releasing: new Set(),
    deleting: new Map(),
    deletePausedUntil: Number.NEGATIVE_INFINITY,
    reported: undefined,
  };
}

/**
 * The one transition: `now` is our clock (monotonic by default, see machine.ts), `busy` the shards with work in flight
 * (see `gate`), `wall` the wall time written into a released member Lease (default `now`). Pure: the state given is
 * not changed, the effects are for the shell to carry out in order.
 */
export function stepSharding(
  config: ShardingConfig,
  state: ShardingState,
  input: ShardingInput,
  now: number,
  busy: ReadonlySet<number>,
  wall = now,
): ShardingStep {
  const out: ShardingEffect[] = [];
  switch (input.type) {
    case 'listed':
      return done(
        recount(config, { ...listed(config, state, input.leases, input.startedAt, now, out), listed: true }, now, wall, busy, out),
        out,
      );
    case 'renewing': {
      const regained = input.lead && !state.renewing;
      const next = { ...state, renewing: input.lead };
      return done(regained && state.listed ? recount(config, refreshed(next, now), now, wall, busy, out) : next, out);
    }
    case 'leading': {
      if (state.leading[input.shard] && !input.lead) out.push({ type: 'lost', shard: input.shard });
      const leading = state.leading.map((lead, shard) => (shard === input.shard ? input.lead : lead));
      return done(update(config, { ...state, leading }, busy, out, now), out);
    }
    case 'drained':
      return done(update(config, state, busy, out, now), out);
    case 'recheck':
      return done(recount(config, state, now, wall, busy, out), out);
    case 'memberReleased': {
      const before = state.seen.get(input.lease);
      if (before?.resourceVersion !== input.resourceVersion) return done(state, out);
      const sighting = { record: input.written.record, resourceVersion: input.written.resourceVersion, at: now, asOf: now };
      return done({ ...state, seen: new Map(state.seen).set(input.lease, sighting) }, out);
    }
    case 'memberReleaseFailed': {
      if (input.conflict) return done(state, out);
      const releasing = new Set(state.releasing);
      releasing.delete(`${input.lease}@${input.resourceVersion}`); // tried again at the next recount
      return done({ ...state, releasing }, out);
    }
    case 'memberDeleted': {
      const deleting = new Map(state.deleting);
      deleting.delete(`${input.lease}@${input.resourceVersion}`);
      if (state.seen.get(input.lease)?.resourceVersion !== input.resourceVersion) return done({ ...state, deleting }, out);
      const seen = new Map(state.seen);
      seen.delete(input.lease);
      return done({ ...state, seen, deleting }, out);
    }
    case 'memberDeleteFailed': {
      const key = `${input.lease}@${input.resourceVersion}`;
      const deleting = new Map(state.deleting);
      if (input.lostRace) return done({ ...state, deleting: deleting.set(key, 'lost') }, out);
      deleting.delete(key);
      // Forbidden is the Role's answer (no `delete` on leases), not a fault that passes: not asked again.
      const deletePausedUntil = input.forbidden === true ? Number.POSITIVE_INFINITY : now + MEMBER_DELETE_RETRY_MS;
      return done({ ...state, deleting, deletePausedUntil }, out);
    }
  }
}

const done = (state: ShardingState, effects: readonly ShardingEffect[]): ShardingStep => ({ state, effects });

/**
 * A listing's member Leases: a record not seen before is seen from now (the same one keeps its time); one with an
 * identity too long is ignored (reported the first listing it is in); one no longer listed is forgotten once lapsed.
 * A listing sent no later than the listing that showed a Lease's record, or than our release of it was written
 * (`startedAt` ≤ its `asOf`), does not replace that record: it may have been read before it (an answer out of order,
 * or our release of a lapsed member's Lease written while the listing was on its way), and would bring a dead member
 * back until the next listing.
 */
function listed(
  config: ShardingConfig,
  state: ShardingState,
  leases: readonly LeaseSnapshot[],
  startedAt: number | undefined,
  now: number,
  out: ShardingEffect[],
): ShardingState {
  const seen = new Map<string, Sighting>();
  const ignored = new Set<string>();
  const foreign = new Map<string, Sighting & { readonly shards: string }>();
  const overlong = new Set<string>();
  const ours = String(config.shards);
  for (const lease of leases) {
    const count = lease.labels?.[SHARDS_LABEL];
    const inGroup = lease.name.startsWith(`${config.name}-member-`) || lease.name.startsWith(`${config.name}-shard-`);
    // A Lease without the label (written by a version before it) says nothing: counted as agreeing.
    if (inGroup && count !== undefined && count !== ours) {
      const before = state.foreign.get(lease.name);
      const same = before !== undefined && sameRecord(before.record, lease.record);
      foreign.set(lease.name, {
        record: lease.record,
        resourceVersion: lease.resourceVersion,
        at: same ? before.at : now,
        asOf: now,
        shards: count.slice(0, 20),
      });
    }
    if (!lease.name.startsWith(`${config.name}-member-`)) continue;
    const { holderIdentity } = lease.record;
    if (holderIdentity.length > MAX_IDENTITY_LENGTH) {
      ignored.add(lease.name);
      if (!state.ignored.has(lease.name))
        out.push({
          type: 'invalid',
          lease: lease.name,
          message: `holderIdentity of ${holderIdentity.length} characters (more than ${MAX_IDENTITY_LENGTH}): not counted as a member`,
        });
      continue;
    }
    if (config.leaseDurationMs !== undefined && lease.record.leaseDurationSeconds * 1000 > MEMBER_LEASE_FACTOR * config.leaseDurationMs) {
      overlong.add(lease.name);
      if (!state.overlong?.has(lease.name))
        out.push({
          type: 'invalid',
          lease: lease.name,
          message:
            `leaseDurationSeconds ${lease.record.leaseDurationSeconds} (more than ${MEMBER_LEASE_FACTOR} × this replica's ` +
            `${config.leaseDurationMs / 1000} s): the member counts for ${(MEMBER_LEASE_FACTOR * config.leaseDurationMs) / 1000} s after its last renewal`,
        });
    }
    const before = state.seen.get(lease.name);
    const same = before !== undefined && sameRecord(before.record, lease.record);
    // Sent no later than what showed the record we know (in the same millisecond too: which came first is unknown).
    if (before !== undefined && !same && startedAt !== undefined && startedAt <= before.asOf) {
      seen.set(lease.name, before); // an answer maybe older than what we know
      continue;
    }
    const asOf = Math.max(startedAt ?? now, same ? before.asOf : Number.NEGATIVE_INFINITY);
    seen.set(lease.name, { record: lease.record, resourceVersion: lease.resourceVersion, at: same ? before.at : now, asOf });
  }
  // One no longer listed (deleted) counts until it lapses, and for our own lease duration at most.
  const gone = (sighting: Sighting) =>
    Math.min(until(config, sighting), sighting.at + (config.leaseDurationMs ?? Number.POSITIVE_INFINITY));
  for (const [name, sighting] of state.seen) if (!seen.has(name) && !ignored.has(name) && gone(sighting) > now) seen.set(name, sighting);
  // One no longer listed (released and deleted, or relabelled) still counts until it lapses: it may be held meanwhile.
  for (const [name, sighting] of state.foreign) if (!foreign.has(name) && until(config, sighting) > now) foreign.set(name, sighting);
  const leaseOf = (key: string) => key.slice(0, key.lastIndexOf('@'));
  const releasing = new Set([...state.releasing].filter((key) => seen.has(leaseOf(key))));
  const deleting = new Map([...state.deleting].filter(([key]) => seen.has(leaseOf(key))));
  return { ...state, seen, ignored, releasing, deleting, foreign, overlong };
}

/** Renewed again after a freeze: every member still in the view gets a lease duration from now (a dropped one stays dropped). */
function refreshed(state: ShardingState, now: number): ShardingState {
  const seen = new Map(state.seen);
  for (const [lease, sighting] of seen)
    if (sighting.at < now && state.members.includes(sighting.record.holderIdentity)) seen.set(lease, { ...sighting, at: now });
  return { ...state, seen };
}

/** When a sighting lapses for us: its lease duration from when it was first seen, bounded (see {@link MEMBER_LEASE_FACTOR}). */
const until = (config: ShardingConfig, sighting: Sighting) =>
  sighting.at +
  Math.min(sighting.record.leaseDurationSeconds * 1000, MEMBER_LEASE_FACTOR * (config.leaseDurationMs ?? Number.POSITIVE_INFINITY));

/** The members alive now, the recheck timer, the releases of lapsed members, then `update`. */
function recount(
  config: ShardingConfig,
  state: ShardingState,
  now: number,
  wall: number,
  busy: ReadonlySet<number>,
  out: ShardingEffect[],
): ShardingState {
  const alive = new Set([config.identity]);
  const frozen = state.listed && !state.renewing;
  if (frozen) for (const member of state.members) alive.add(member);
  let next = Number.POSITIVE_INFINITY;
  for (const sighting of state.seen.values()) {
    if (sighting.record.holderIdentity === '' || until(config, sighting) <= now) continue;
    alive.add(sighting.record.holderIdentity);
    if (!frozen) next = Math.min(next, until(config, sighting));
  }
  const members = bounded([...alive].sort(), config.identity);
  const crowded = members.length < alive.size;
  const paused = pauseOf(config, state, now);
  if (paused !== undefined && state.paused === undefined) out.push({ type: 'invalid', lease: paused.lease, message: paused.message });
  if (crowded && !state.crowded)
    out.push({
      type: 'invalid',
      lease: `${config.name}-member-*`,
      message: `${alive.size} live members (more than ${MAX_MEMBERS}): only the first ${MAX_MEMBERS} by identity are counted`,
    });
  let releasing = state.releasing;
  if (!frozen)
    for (const [lease, sighting] of state.seen) {
      const { holderIdentity } = sighting.record;
      const key = `${lease}@${sighting.resourceVersion}`;
      if (holderIdentity === '' || holderIdentity === config.identity || until(config, sighting) > now || releasing.has(key)) continue;
      releasing = new Set(releasing).add(key);
      out.push({ type: 'releaseMember', lease, resourceVersion: sighting.resourceVersion, record: released(sighting.record, wall) });
    }
  const deleting = frozen || members[0] !== config.identity ? state.deleting : stale(config, state, now, out);
  // The assignment is a function of the members alone: computed again only when they change.
  const owners = sameList(members, state.members) ? state.owners : assignShards(config.shards, members, config.name);
  const counted = { ...state, members, owners, releasing, deleting, crowded, paused: paused?.message };
  const result = update(config, counted, busy, out, now);
  // Drop a member the moment its Lease lapses for us, not at the next listing; end a handover's drain at its bound.
  const lapse = Number.isFinite(next) && next - now < config.retryPeriodMs ? next : Number.POSITIVE_INFINITY;
  const wake = Math.min(lapse, drainEnd(config, result, now));
  out.push({ type: 'recheck', inMs: Number.isFinite(wake) ? Math.max(wake - now, MIN_WAKE_MS) : undefined });
  return result;
}

/**
 * The deletions of stale member Leases to send now (we are first among the live members, not frozen): released,
 * unchanged for `staleMemberMs` since first seen, not ours, not already sent or lost for that resourceVersion.
 */
function stale(config: ShardingConfig, state: ShardingState, now: number, out: ShardingEffect[]): ShardingState['deleting'] {
  const { staleMemberMs } = config;
  if (staleMemberMs === undefined || !state.listed || now < state.deletePausedUntil) return state.deleting;
  let inFlight = 0;
  for (const status of state.deleting.values()) if (status === 'sent') inFlight++;
  const deleting = new Map(state.deleting);
  const ours = `${config.name}-member-${config.identity}`;
  for (const [lease, sighting] of state.seen) {
    if (inFlight >= MAX_MEMBER_DELETES) break;
    const key = `${lease}@${sighting.resourceVersion}`;
    if (sighting.record.holderIdentity !== '' || lease === ours || now - sighting.at < staleMemberMs || deleting.has(key)) continue;
    deleting.set(key, 'sent');
    inFlight++;
    out.push({ type: 'deleteMember', lease, resourceVersion: sighting.resourceVersion });
  }
  return deleting;
}

/**
 * Why we may hold no shard now: a Lease of the group, held and not lapsed for us, written by a replica counting other
 * shards (the first by name), or undefined. Both counts pause (each sees the other), so no key has two holders while
 * they overlap; the group settles once the other count's Leases are released or lapsed (its replicas gone).
 */
function pauseOf(
  config: ShardingConfig,
  state: ShardingState,
  now: number,
): { readonly lease: string; readonly message: string } | undefined {
  const live = [...state.foreign]
    .filter(([, s]) => s.record.holderIdentity !== '' && until(config, s) > now)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const first = live[0];
  if (!first) return undefined;
  const [lease, sighting] = first;
  return {
    lease,
    message:
      `${sighting.record.holderIdentity.slice(0, 64)} counts ${sighting.shards} shards in this group, this replica ${config.shards}: ` +
      'a key would have two holders, so this replica holds no shard until no live Lease of the group counts otherwise ' +
      '(change `shards` with a Recreate rollout, or give the new count another group name)',
  };
}

/** The first {@link MAX_MEMBERS} of `sorted`, `us` among them. */
function bounded(sorted: readonly string[], us: string): readonly string[] {
  if (sorted.length <= MAX_MEMBERS) return sorted;
  const first = sorted.slice(0, MAX_MEMBERS);
  return first.includes(us) ? first : [...first.slice(0, MAX_MEMBERS - 1), us].sort();
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** The record that releases a member Lease (as client-go's ReleaseOnCancel: holder "", lease duration 1 s). */
function released(record: LeaderElectionRecord, wall: number): LeaderElectionRecord {
  const time = microTime(wall);
  return { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time, leaseTransitions: record.leaseTransitions };
}

/** When the next handover in progress reaches its drain bound, after `now` (+∞: none, or no bound). */
function drainEnd(config: ShardingConfig, state: ShardingState, now: number): number {
  let end = Number.POSITIVE_INFINITY;
  if (config.handoverDrainMs === undefined) return end;
  for (const since of state.handingOver ?? [])
    if (since !== undefined && since + config.handoverDrainMs > now) end = Math.min(end, since + config.handoverDrainMs);
  return end;
}

/** Which shards to want, which are held (and newly acquired), and the status when it changed. */
function update(
  config: ShardingConfig,
  state: ShardingState,
  busy: ReadonlySet<number>,
  out: ShardingEffect[],
  now: number,
): ShardingState {
  const held = new Set<number>();
  const wanted = state.wanted.slice();
  const handingOver = (state.handingOver ?? []).slice();
  for (let shard = 0; shard < config.shards; shard++) {
    const mine = state.paused === undefined && state.owners[shard] === config.identity;
    const leading = state.leading[shard] === true;
    if (leading && mine) held.add(shard);
    // Hand a shard over only once its in-flight work is done, or its drain bound passed (its work then cancelled, as
    // at a lost lead: one hung reconcile must not leave the shard with no reconciler); ask for it as soon as it is ours.
    const since = leading && !mine && busy.has(shard) ? (handingOver[shard] ?? now) : undefined;
    handingOver[shard] = since;
    const overdue = since !== undefined && config.handoverDrainMs !== undefined && now - since >= config.handoverDrainMs;
    const want = mine || (since !== undefined && !overdue);
    if (wanted[shard] !== want) {
      wanted[shard] = want;
      out.push({ type: 'want', shard, want });
      if (overdue) out.push({ type: 'lost', shard });
    }
  }
  for (const shard of held) if (!state.held.has(shard)) out.push({ type: 'acquired', shard });
  const assigned = new Set<number>();
  if (state.listed && state.paused === undefined)
    for (let shard = 0; shard < config.shards; shard++) if (state.owners[shard] === config.identity) assigned.add(shard);
  const { reported } = state;
  const status: ShardStatus = {
    name: config.name,
    identity: config.identity,
    shards: config.shards,
    held,
    assigned,
    members: state.members,
    listed: state.listed,
  };
  const changed =
    !reported ||
    reported.listed !== state.listed ||
    !sameSet(reported.held, held) ||
    !sameSet(reported.assigned, assigned) ||
    reported.members.join() !== state.members.join();
  if (changed) out.push({ type: 'status', status });
  return { ...state, wanted, held, handingOver, reported: changed ? status : reported };
}
