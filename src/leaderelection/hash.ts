import { fnv1a } from '../util/fnv1a.ts';

export { fnv1a };

/** The shard of a key, in [0, shards). */
export function shardOf(key: string, shards: number): number {
  return fnv1a(key) % shards;
}

/**
 * Who should hold `shard` among `members`: rendezvous (highest random weight)
 * hashing, so a member joining or leaving moves only the shards it wins or held.
 */
export function ownerOf(shard: number, members: readonly string[], salt = ''): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const member of members) {
    const weight = fnv1a(`${salt}\u0000${shard}\u0000${member}`);
    if (weight > bestWeight || (weight === bestWeight && best !== undefined && member < best)) {
      best = member;
      bestWeight = weight;
    }
  }
  return best;
}

/**
 * Who should hold each shard: rendezvous hashing with a cap, so every member
 * gets at most ⌈shards / members⌉. Shards are placed in order, each with the
 * highest-weight member that still has room; any replica with the same member
 * list computes the same answer.
 */
export function assignShards(shards: number, members: readonly string[], salt = ''): string[] {
  const cap = Math.ceil(shards / Math.max(1, members.length));
  const load = new Map<string, number>();
  const owners: string[] = [];
  for (let shard = 0; shard < shards; shard++) {
    const open = members.filter((m) => (load.get(m) ?? 0) < cap);
    const owner = ownerOf(shard, open, salt) ?? '';
    owners.push(owner);
    load.set(owner, (load.get(owner) ?? 0) + 1);
  }
  return owners;
}
