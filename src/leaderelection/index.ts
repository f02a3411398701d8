/**
 * rx-informer/leaderelection: run controllers as several replicas.
 * Leader election and key sharding on coordination.k8s.io Leases, as
 * Observables, and the sharded informer that caches a replica's shards. Knows nothing of controllers (see
 * docs/replicas.md for the gating line).
 */
export { leaderElection, type ElectionStatus, type LeaderElection, type LeaderElectionOptions } from './leaderElection.ts';
export { sharding, type Sharding, type ShardingOptions, type ShardStatus } from './sharding.ts';
// The informer that caches only the shards sharding() gives this replica: its home is here, beside sharding(), the one
// handle it takes (docs/api.md, "Where each name lives"); the root entry's is a deprecated alias.
export { shardedInformer, type ShardedInformer, type ShardSource } from '../5-informer/shardedInformer.ts';
export { LeaseError, type LeaseOperation } from './errors.ts';
export type { LeaseClient, LeaseClients } from './leaseClient.ts';
export { httpLeaseClients, type HttpLeaseOptions } from './httpLeaseClient.ts';
// A key's shard, pinned across versions (spec/leaderelection/shardOfPinned); the assignment of shards to members is internal.
export { shardOf } from './hash.ts';
// The election machine (machine.ts: begin, observe, afterRead, afterWrite, release, …) is internal: leaderElection() is its API.
export { DEFAULT_TIMING, JITTER_FACTOR, type ElectionTiming } from './machine.ts';
export { leaderElectionFamilies, shardFamilies } from './metrics.ts';
// For a LeaseClient of your own: a Lease's spec to and from the record the elector reads and writes.
export { leaseSpec, recordOf, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';
