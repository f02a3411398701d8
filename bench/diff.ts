/**
 * Micro-benchmark of the diff() operator's comparison on ≈ 4.8 KB pods
 * (bench/workload/pods.ts): CPU µs per update, by case. Not a test (no
 * timing is asserted anywhere); run it and read the numbers:
 *
 *   node bench/diff.ts [updates]        # default 20,000 per case
 *
 * Cases: a real update (a MODIFIED pod: status and restart counts change,
 * parsed afresh so no subtree is shared, as every watch event is); the same
 * with `fields: ['spec.**']` (status is never entered); a relist that
 * re-delivered the same object (same reference: nothing to walk); and a
 * resync (same resourceVersion: the operator skips it without a walk); and
 * `trustGeneration` with an unchanged generation (spec is not compared).
 */
import { Subject } from 'rxjs';
import { diff } from '../src/diff.ts';
import { type InformerEvent, type KubeObject } from '../src/index.ts';
import { makePod } from './workload/pods.ts';

const updates = Number(process.argv[2] ?? 20_000);
const pods = Array.from({ length: 200 }, (_, index) => {
  const before = JSON.parse(JSON.stringify(makePod({ index, resourceVersion: 1000 + index, revision: 1 }))) as KubeObject;
  const after = JSON.parse(JSON.stringify(makePod({ index, resourceVersion: 2000 + index, revision: 2 }))) as KubeObject;
  return { before, after };
});
const bytes = JSON.stringify(pods[0]!.before).length;

const withGeneration = pods.map(({ before, after }) => ({
  before: { ...before, metadata: { ...before.metadata, generation: 1 } },
  after: { ...after, metadata: { ...after.metadata, generation: 1 } },
}));

function measure(
  name: string,
  fields: readonly string[] | undefined,
  event: (i: number) => InformerEvent<KubeObject>,
  trustGeneration = false,
): void {
  const input = new Subject<InformerEvent<KubeObject>>();
  let emitted = 0;
  let changes = 0;
  input.pipe(diff({ ...(fields ? { fields } : {}), trustGeneration })).subscribe((e) => {
    emitted++;
    changes += e.changes.length;
  });
  for (let i = 0; i < 2_000; i++) input.next(event(i)); // warm-up
  emitted = 0;
  changes = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < updates; i++) input.next(event(i));
  const cpu = process.cpuUsage(start);
  const us = (cpu.user + cpu.system) / updates;
  console.log(
    `${name.padEnd(54)} ${us.toFixed(2).padStart(8)} µs/update  ${(emitted / updates).toFixed(2)} emitted, ${(changes / Math.max(1, emitted)).toFixed(1)} changes each`,
  );
}

console.log(`diff() on pods of ${bytes} bytes of JSON, ${updates} updates per case (Node ${process.version})`);
const pick = (i: number) => pods[i % pods.length]!;
measure('update (status changes, nothing shared)', undefined, (i) => ({
  type: 'updated',
  oldObject: pick(i).before,
  object: pick(i).after,
  isInInitialList: false,
  resync: false,
}));
measure("update, fields ['spec.**']", ['spec.**'], (i) => ({
  type: 'updated',
  oldObject: pick(i).before,
  object: pick(i).after,
  isInInitialList: false,
  resync: false,
}));
measure("update, fields ['!status', '!metadata.managedFields']", ['!status', '!metadata.managedFields'], (i) => ({
  type: 'updated',
  oldObject: pick(i).before,
  object: pick(i).after,
  isInInitialList: false,
  resync: false,
}));
measure(
  'update, trustGeneration, same generation (spec skipped)',
  undefined,
  (i) => ({
    type: 'updated',
    oldObject: withGeneration[i % pods.length]!.before,
    object: withGeneration[i % pods.length]!.after,
    isInInitialList: false,
    resync: false,
  }),
  true,
);
measure('same object (relist reuse: same reference)', undefined, (i) => ({
  type: 'updated',
  oldObject: pick(i).before,
  object: pick(i).before,
  isInInitialList: false,
  resync: false,
}));
measure('resync (same resourceVersion: skipped)', undefined, (i) => ({
  type: 'updated',
  oldObject: pick(i).before,
  object: pick(i).before,
  isInInitialList: false,
  resync: true,
}));
