import { describe, expect, it } from 'vitest';
import { pageFrame, podEntry } from '../../bench/protobuf/listPages.ts';
import { makePod } from '../../bench/workload/pods.ts';
import { encodeEnvelope } from '../../packages/emulator/src/protobuf/encode.ts';

/** The bench workload server's protobuf pages (bench/protobuf/listPages.ts) are the emulator encoder's lists, byte for byte. */
describe('protobuf list pages assembled from entries', () => {
  it.each([0, 1, 3])('a page of %i pods, with and without continue', (n) => {
    const items = Array.from({ length: n }, (_, index) => {
      const { kind: _k, apiVersion: _a, ...item } = makePod({ index, resourceVersion: index + 1, revision: 0 });
      return item;
    });
    for (const meta of [{ resourceVersion: '42' }, { resourceVersion: '42', continue: 'abc', remainingItemCount: 7 }]) {
      const entries = items.map(podEntry);
      const { head, tail } = pageFrame(
        meta,
        entries.reduce((sum, e) => sum + e.length, 0),
      );
      const expected = encodeEnvelope({ apiVersion: 'v1', kind: 'PodList', metadata: meta, items });
      expect(Buffer.concat([head, ...entries, tail]).equals(expected)).toBe(true);
    }
  });
});
