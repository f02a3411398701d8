/**
 * examples/replay: the loop of docs/testing.md on one real bug shape. incident.jsonl was recorded from the
 * emulator by examples/replay/record.ts (a pod deleted and re-created while the watch was down, found by a
 * relist); replayed in virtual time, it shows the buggy controller's leak, and that the fix holds.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { Pod, informer, type Pod as PodObject, type Store } from '../../src/index.ts';
import { readTrace } from '../../src/pipeline.ts';
import { replayListWatch } from '../../src/testing/index.ts';
import { portAllocator, type PortAllocator } from '../../examples/replay/controller.ts';

const trace = readTrace(readFileSync(new URL('../../examples/replay/incident.jsonl', import.meta.url), 'utf8'));

/** Replays the incident into the controller; returns it and the informer's last store. */
function replayInto(allocator: PortAllocator): Store<PodObject> | undefined {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  let store: Store<PodObject> | undefined;
  scheduler.run(() => {
    const replay = replayListWatch(trace, { scheduler });
    const pods = informer(replay, Pod, { namespace: 'shop', scheduler });
    const subscription = pods.events$.subscribe((event) => allocator.handle(event));
    subscription.add(pods.store$.subscribe((s) => (store = s)));
    subscription.add(replay.finished$.subscribe(() => subscription.unsubscribe()));
  });
  return store;
}

const uids = (store: Store<PodObject> | undefined) => (store?.list() ?? []).map((p) => p.metadata.uid ?? '').sort();

describe('examples/replay: a delete and re-create found by a relist', () => {
  it('the recorded incident: the buggy allocator keeps the deleted pod’s port for ever', () => {
    const buggy = portAllocator({ fixed: false });
    const store = replayInto(buggy);
    expect(uids(store)).toHaveLength(2);
    expect(buggy.ports.size).toBe(3); // db, the new web, and the deleted web's leaked port
    expect([...buggy.ports.keys()]).toEqual(expect.arrayContaining(uids(store)));
  });

  it('the fix: one port per live pod, and the deleted one’s is back in the pool', () => {
    const fixed = portAllocator({ fixed: true });
    const store = replayInto(fixed);
    expect([...fixed.ports.keys()].sort()).toEqual(uids(store));
  });
});
