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
export {
  DEFAULT_TIMING,
  JITTER_FACTOR,
  afterRead,
  afterWrite,
  begin,
  expiresAt,
  initialElection,
  leading,
  nextAttemptIn,
  observe,
  release,
  stepDown,
  timingProblem,
  type Candidate,
  type ElectionState,
  type ElectionTiming,
  type LeaseRequest,
} from './machine.ts';
export { leaderElectionFamilies, shardFamilies } from './metrics.ts';
export { leaseSpec, microTime, recordOf, sameRecord, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';
