/**
 * What a Lease says about who leads: client-go's LeaderElectionRecord, read
 * from and written to a coordination.k8s.io/v1 Lease's spec.
 */
export interface LeaderElectionRecord {
  /** Who holds the lease; "" when released. */
  readonly holderIdentity: string;
  /** How long others must see the record unchanged before they may take it. */
  readonly leaseDurationSeconds: number;
  /** RFC 3339 with microseconds (MicroTime), as written by the holder's wall clock. Informational only. */
  readonly acquireTime?: string;
  /** As `acquireTime`. Nobody compares clocks: expiry is judged by each observer's own clock. */
  readonly renewTime?: string;
  /** How many times the holder has changed. */
  readonly leaseTransitions: number;
}

/** A Lease as read or written: its record and the resourceVersion a write must quote. */
export interface LeaseSnapshot {
  readonly name: string;
  readonly resourceVersion: string;
  readonly record: LeaderElectionRecord;
  /**
   * The Lease's labels, as a listing reads them: `sharding()` reads its shard count there ({@link SHARDS_LABEL}); the
   * HTTP client keeps that one only (a listing's snapshots are held until it ends: a peer's thousands of labels are not).
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * The label on every Lease of a group (member and shard) saying how many shards its writer counts: key → shard is
 * FNV mod `shards` while the shard Leases `<name>-shard-<i>` are shared, so two counts in one group would give one key
 * to two holders (a rolling update that changes `shards`, two controllers naming one group).
 */
export const SHARDS_LABEL = 'rx-informer.io/shards';

/** Same record? (client-go compares the serialized record; renewTime changes at every renewal.) */
export function sameRecord(a: LeaderElectionRecord, b: LeaderElectionRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

/** A MicroTime as kube-apiserver keeps it: `2026-11-23T12:58:50.044000Z`. */
export function microTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The `spec` of a Lease holding this record. */
export function leaseSpec(record: LeaderElectionRecord): Record<string, unknown> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    ...(record.acquireTime === undefined ? {} : { acquireTime: record.acquireTime }),
    ...(record.renewTime === undefined ? {} : { renewTime: record.renewTime }),
    leaseTransitions: record.leaseTransitions,
  };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The record a Lease object carries (missing fields read as client-go reads nil pointers: "", 0). */
export function recordOf(spec: unknown): LeaderElectionRecord {
  const s = (typeof spec === 'object' && spec !== null ? spec : {}) as Record<string, unknown>;
  const acquireTime = str(s['acquireTime']);
  const renewTime = str(s['renewTime']);
  return {
    holderIdentity: str(s['holderIdentity']) ?? '',
    leaseDurationSeconds: num(s['leaseDurationSeconds']),
    ...(acquireTime === undefined ? {} : { acquireTime }),
    ...(renewTime === undefined ? {} : { renewTime }),
    leaseTransitions: num(s['leaseTransitions']),
  };
}

/** A JSON value as an object: itself when it is one, else `{}` (a Lease answer's fields read as missing). */
export const objectOf = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};

/**
 * The snapshot of a Lease answer (`name` when it has none); `withLabels`: with its shard count's label, the one a
 * listing needs (its snapshots are held until the listing ends, a peer's other labels need not be).
 */
export function snapshotOf(name: string, body: unknown, withLabels = false): LeaseSnapshot {
  const lease = objectOf(body);
  const metadata = objectOf(lease['metadata']);
  const rv = metadata['resourceVersion'];
  const snapshot = {
    name: typeof metadata['name'] === 'string' ? metadata['name'] : name,
    resourceVersion: typeof rv === 'string' ? rv : '',
    record: recordOf(lease['spec']),
  };
  if (!withLabels) return snapshot;
  const count = objectOf(metadata['labels'])[SHARDS_LABEL];
  return { ...snapshot, labels: typeof count === 'string' ? { [SHARDS_LABEL]: count } : {} };
}
