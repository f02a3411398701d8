import { describe, expect, it } from 'vitest';
import { LineFolder } from '../../examples/sharded/foldLines.ts';

describe("examples/sharded: a replica's repeated warnings folded", () => {
  it('prints a line once per shape (numbers aside), then one line with how many more at each flush', () => {
    const out: string[] = [];
    const folder = new LineFolder((l) => out.push(l));
    for (const shard of [3, 7, 11]) folder.add(`replica-a: Lease Timeout: get lease pods-shard-${shard}: no answer within 1500 ms`);
    folder.add('replica-b: informer Gone: too old resource version');
    // Digits inside a word are part of it: these two differ by a number only, once each.
    folder.add('replica-c: GET /apis/coordination.k8s.io/v1/leases/pods-shard-1: ECONNRESET');
    folder.add('replica-c: GET /apis/coordination.k8s.io/v1/leases/pods-shard-2: ECONNRESET');
    expect(out).toEqual([
      'replica-a: Lease Timeout: get lease pods-shard-3: no answer within 1500 ms',
      'replica-b: informer Gone: too old resource version',
      'replica-c: GET /apis/coordination.k8s.io/v1/leases/pods-shard-1: ECONNRESET',
    ]);
    folder.flush();
    expect(out.slice(3)).toEqual([
      'replica-a: Lease Timeout: get lease pods-shard-N: no answer within N ms (×2 more)',
      'replica-c: GET /apis/coordination.k8s.io/v1/leases/pods-shard-N: ECONNRESET (×1 more)',
    ]);
    // After a flush a shape is new again: its next line shows whole, and a flush without repeats prints nothing.
    folder.add('replica-a: Lease Timeout: get lease pods-shard-5: no answer within 1500 ms');
    folder.flush();
    expect(out.slice(5)).toEqual(['replica-a: Lease Timeout: get lease pods-shard-5: no answer within 1500 ms']);
  });
});
