/**
 * ownerOf(): a tie of weights (a 32-bit FNV-1a collision) goes to the smaller identity whatever the order the members
 * are given in (gaps102 mutants H02, H03, closed by gaps108). sharding() sorts its members, so every replica agrees
 * either way; the rule keeps ownerOf() a function of the member *set*, as its doc says ("any replica with the same member
 * list computes the same answer"), for callers that do not sort.
 */
import { describe, expect, it } from 'vitest';
import { assignShards, fnv1a, ownerOf } from '../../src/leaderelection/hash.ts';

// Found by a birthday search over `m<i>` (salt `g`, shard 0); checked below, so the case cannot silently stop being a tie.
const [low, high] = ['m121590', 'm76766'];

describe('ownerOf(): equal weights', () => {
  it('the two identities weigh the same for shard 0 under salt g', () => {
    expect(fnv1a(`g\u00000\u0000${low}`)).toBe(fnv1a(`g\u00000\u0000${high}`));
    expect(low < high).toBe(true);
  });

  it('go to the smaller identity, in either order', () => {
    expect(ownerOf(0, [low, high], 'g')).toBe(low);
    expect(ownerOf(0, [high, low], 'g')).toBe(low);
    expect(assignShards(1, [high, low], 'g')).toEqual([low]);
    expect(assignShards(1, [low, high], 'g')).toEqual([low]);
  });
});
