/**
 * rx-informer/leaderelection: run controllers as several replicas.
 * Leader election and key sharding on coordination.k8s.io Leases, as
 * Observables. Knows nothing of controllers (see docs/replicas.md for the gating line).
 */
export { leaderElection, type ElectionStatus, type LeaderElection, type LeaderElectionOptions } from './leaderElection.ts';
export { sharding, type Sharding, type ShardingOptions, type ShardStatus } from './sharding.ts';
export { LeaseError, type LeaseOperation } from './errors.ts';
export type { LeaseClient, LeaseClients } from './leaseClient.ts';
export { httpLeaseClients, type HttpLeaseOptions } from './httpLeaseClient.ts';
export { assignShards, fnv1a, ownerOf, shardOf } from './hash.ts';
// The election machine (machine.ts: begin, observe, afterRead, afterWrite, release, …) is internal: leaderElection() is its API.
export { DEFAULT_TIMING, JITTER_FACTOR, type ElectionTiming } from './machine.ts';
export { leaderElectionFamilies, shardFamilies } from './metrics.ts';
// For a LeaseClient of your own: a Lease's spec to and from the record the elector reads and writes.
export { leaseSpec, recordOf, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';
