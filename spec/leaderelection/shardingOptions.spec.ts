/**
 * sharding()'s and leaderElection()'s options checked when called (review audit27): an identity that cannot name a
 * member Lease was accepted (its Lease refused, 422, for ever, and the group never counted it), and `requestTimeoutMs`
 * 0 or negative was accepted (sharding() read 0 two ways: its listings timed out at once, its elections took the default).
 */
import { describe, expect, it } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

const clients = () => new FakeLeaseServer().clients({ client: 'a' });

describe('sharding() and leaderElection() options', () => {
  it('an identity or name that cannot name a Lease is a TypeError naming the Lease and what is allowed', () => {
    for (const [name, identity] of [
      ['g', 'MyMac_1'],
      ['g', 'MyMac'],
      ['g', 'pod_1'],
      ['g', 'pod-'],
      ['G', 'pod-1'],
      ['g', 'a'.repeat(244)], // g-member- + 244 = 253 is fine, see below; one more is not
    ] as const) {
      const long = identity.length > 100 ? `${identity}a` : identity;
      expect(() => sharding(clients(), { name, shards: 4, identity: long }), `${name} ${identity.slice(0, 10)}`).toThrow(
        /the Lease name ".*-member-.*" .*is not a Kubernetes object name: lowercase letters, digits, `-` and `\.`/,
      );
    }
    expect(() => sharding(clients(), { name: 'g', shards: 4, identity: 'a'.repeat(244) })).not.toThrow();
    expect(() => sharding(clients(), { name: 'g', shards: 4, identity: 'mymac-1.local' })).not.toThrow();
  });

  it('requestTimeoutMs must be a positive number: 0, negative, NaN and Infinity are TypeErrors naming it', () => {
    for (const requestTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => sharding(clients(), { name: 'g', shards: 4, identity: 'a', requestTimeoutMs }), String(requestTimeoutMs)).toThrow(
        /sharding: `requestTimeoutMs` must be a positive number/,
      );
      expect(() => leaderElection(clients().lease('x'), { identity: 'a', requestTimeoutMs }), String(requestTimeoutMs)).toThrow(
        /leaderElection: `requestTimeoutMs` must be a positive number/,
      );
    }
    expect(() => sharding(clients(), { name: 'g', shards: 4, identity: 'a', requestTimeoutMs: 1_000 })).not.toThrow();
    expect(() => leaderElection(clients().lease('x'), { identity: 'a', requestTimeoutMs: 1_000 })).not.toThrow();
  });

  it('handoverDrainMs must be a positive number (Infinity: no bound): 0, negative and NaN are TypeErrors naming it', () => {
    for (const handoverDrainMs of [0, -1, Number.NaN])
      expect(() => sharding(clients(), { name: 'g', shards: 4, identity: 'a', handoverDrainMs }), String(handoverDrainMs)).toThrow(
        /sharding: `handoverDrainMs` must be a positive number/,
      );
    for (const handoverDrainMs of [1, 60_000, Number.POSITIVE_INFINITY])
      expect(() => sharding(clients(), { name: 'g', shards: 4, identity: 'a', handoverDrainMs })).not.toThrow();
  });
});
