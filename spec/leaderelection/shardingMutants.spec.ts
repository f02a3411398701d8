/**
 * sharding() cases found by mutation testing (gaps102): each fails with one hand-made mutation of sharding.ts that
 * every other spec let through.
 */
import { describe, expect, it } from 'vitest';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

const clients = () => new FakeLeaseServer().clients({ client: 'a' });

describe('sharding() options: the Lease names', () => {
  it("the last shard's Lease name is checked: with 101 shards, `<name>-shard-100` is one character too long", () => {
    // 244 + '-member-b' (9) = 253: the member Lease is nameable; 244 + '-shard-99' (9) = 253 too, '-shard-100' is 254.
    const name = 'g'.repeat(244);
    expect(() => sharding(clients(), { name, shards: 100, identity: 'b' })).not.toThrow();
    expect(() => sharding(clients(), { name, shards: 101, identity: 'b' })).toThrow(
      /the Lease name "g+-shard-100" .*is not a Kubernetes object name/,
    );
  });
});
