// The soak's oracle for what a subscriber sees (harness/history.ts). An on() handler's backlog coalesces per key
// (eventQueue.ts: updated + deleted → deleted), so a missed deletion's tombstone may carry an update the handler never
// got: seen once in CI (seed 20261245, a slow handler at 10 got the tombstone at 12). An events$ subscriber gets every
// event, so its tombstone must carry exactly the last state it saw.
import { describe, expect, it } from 'vitest';
import type { InformerEvent, KubeObject } from '../../src/index.ts';
import { ServerHistory, SubscriberView } from './harness/history.ts';

const at = (rv: number): KubeObject =>
  ({ metadata: { name: 'c', namespace: 'default', uid: 'u1', resourceVersion: String(rv) } }) as KubeObject;

function viewAfterTombstone(coalesces: boolean, tombstoneRv: number): string[] {
  const history = new ServerHistory();
  for (const rv of [10, 12]) history.live(at(rv));
  const view = new SubscriberView('view', history, () => true, { coalesces });
  view.apply({ type: 'added', object: at(10), isInInitialList: false } as InformerEvent<KubeObject>);
  view.apply({ type: 'deleted', object: at(tombstoneRv), finalStateUnknown: true, isInInitialList: false } as InformerEvent<KubeObject>);
  return view.violations;
}

describe('SubscriberView: a missed deletion’s tombstone', () => {
  it('for an events$ subscriber, carries exactly the last state it saw', () => {
    expect(viewAfterTombstone(false, 10)).toEqual([]);
    expect(viewAfterTombstone(false, 12)).toEqual([
      'view, event 2 (deleted default/c): a missed deletion carries 12, not the last state seen (10)',
    ]);
  });

  it('for a coalescing on() handler, may carry a later state the server had (an update merged into it), never an earlier one', () => {
    expect(viewAfterTombstone(true, 10)).toEqual([]);
    expect(viewAfterTombstone(true, 12)).toEqual([]);
    expect(viewAfterTombstone(true, 11)).toEqual(['view, event 2 (deleted default/c): default/c@11 is no state the server ever had']);
  });
});
