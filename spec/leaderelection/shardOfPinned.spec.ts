/**
 * shardOf promises a mapping stable across processes, versions and platforms (hash.ts): replicas of two versions
 * during a rolling update must agree on every key's shard, or a key is reconciled twice or not at all. So the
 * values are pinned here as literals (FNV-1a 32 reference vectors, then shard numbers of fixed keys), and the spread
 * is checked: a change such as `fnv1a(key) % (shards + 1) % shards` (shard 0 takes twice its share) fails both.
 */
import { describe, expect, it } from 'vitest';
import { shardOf } from '../../src/leaderelection/index.ts';
import { fnv1a } from '../../src/util/fnv1a.ts';

describe('shardOf is pinned', () => {
  it('fnv1a is FNV-1a 32 (the reference vectors of the FNV test suite)', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
  });

  it('maps fixed keys to fixed shards (UTF-16 code units, as JavaScript strings hold them)', () => {
    const pinned: [key: string, shards: number, hash: number, shard: number][] = [
      ['default/a', 3, 0xca0af726, 2],
      ['kube-system/coredns', 7, 0x9c9ca2f7, 5],
      ['ns/pod-12', 16, 0x99da86ca, 10],
      ['team-a/web-5d8f7', 2, 0x7ec3ad1e, 0],
      ['x/y', 10, 0xc2cc6993, 5],
      ['default/ünïcode', 5, 0x192f1bef, 3],
    ];
    for (const [key, shards, hash, shard] of pinned) {
      expect(fnv1a(key), key).toBe(hash);
      expect(shardOf(key, shards), key).toBe(shard);
    }
  });

  it('spreads 20 000 keys over 4 and over 7 shards within 10 % of an even share', () => {
    for (const shards of [4, 7]) {
      const counts = new Array<number>(shards).fill(0);
      for (let i = 0; i < 20_000; i++) counts[shardOf(`ns/pod-${i}`, shards)]! += 1;
      for (const count of counts) {
        expect(count).toBeGreaterThan((0.9 * 20_000) / shards);
        expect(count).toBeLessThan((1.1 * 20_000) / shards);
      }
    }
  });
});
