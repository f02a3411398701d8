import type { MetricFamily } from '../metrics/prometheus.ts';
import type { ShardStatus } from './sharding.ts';

/** controller-runtime's leader_election_master_status: 1 while we lead the Lease `name`. Render with toPrometheusText. */
export function leaderElectionFamilies(elections: readonly { readonly name: string; readonly leader: boolean }[]): MetricFamily[] {
  return [
    {
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
      type: 'gauge',
      samples: elections.map((e) => ({ labels: { name: e.name }, value: e.leader ? 1 : 0 })),
    },
  ];
}

/** Per-shard ownership (1 = this replica may reconcile the shard's keys) and the members this replica sees. */
export function shardFamilies(groups: readonly ShardStatus[]): MetricFamily[] {
  return [
    {
      name: 'rx_informer_shard_owned',
      help: 'Whether this replica holds the shard (1) or not (0).',
      type: 'gauge',
      samples: groups.flatMap((g) =>
        Array.from({ length: g.shards }, (_, shard) => ({
          labels: { name: g.name, shard: String(shard) },
          value: g.held.has(shard) ? 1 : 0,
        })),
      ),
    },
    {
      name: 'rx_informer_shard_members',
      help: 'Live replicas this replica sees in the sharding group.',
      type: 'gauge',
      samples: groups.map((g) => ({ labels: { name: g.name }, value: g.members.length })),
    },
  ];
}
