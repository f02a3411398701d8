/**
 * Issue #36: where a protobuf run's main-thread time goes, by stage, from a CPU profile of one phase written by
 * `node bench/run.ts --only rx-pb --scenario large … --cpu-prof DIR` (one profile per phase: sync, watch, relist).
 *
 * Each sample goes to the stage of the innermost frame of ours that names one, read from the leaf up. Helpers are given
 * to their caller: wire.ts and values.ts (the protobuf reader's primitives), jsonScanner.ts (FieldsV1's scan, under the
 * walk), 0-model and util (isKubeObject, keys: under 2-source's decoder or the store), and every node_modules frame
 * (rxjs's plumbing, under the stage that emitted). The collector's samples are their own stage; idle time is left out.
 *
 *   node bench/micro/pbStages.ts DIR/large-50k-rx-pb-sync.cpuprofile [items]   # items: per-item µs of each stage
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The stage of a frame of ours, by its file (and, in check.ts, its function); undefined for a helper. */
function stageOf(frame: CallFrame): string | undefined {
  const url = frame.url;
  if (frame.functionName === '(garbage collector)') return 'the collector (main thread)';
  if (url === '' || url.startsWith('node:') || url.includes('/node_modules/')) return undefined;
  const at = url.lastIndexOf('/src/');
  if (at < 0) return url.includes('/bench/') ? 'the bench (probe, subscriber)' : undefined;
  const path = url.slice(at + 5);
  if (path === '1-transport/protobuf/check.ts')
    return frame.functionName === 'checkRaw' || frame.functionName === 'checkJson' ? 'the walk: FieldsV1 JSON' : 'the walk';
  if (path === '1-transport/protobuf/lazy.ts') return 'the lazy decode';
  if (path === '1-transport/protobuf/decode.ts' || path === '1-transport/http/listBody.ts' || path === '1-transport/protobuf/frames.ts')
    return 'the list reader (pages, items, envelope)';
  if (path.startsWith('1-transport/protobuf/wire.ts') || path.startsWith('1-transport/protobuf/values.ts')) return undefined;
  if (path === '1-transport/jsonScanner.ts' || path.startsWith('0-model/') || path.startsWith('util/')) return undefined;
  if (path.startsWith('1-transport/')) return 'HTTP: requests, bodies, budgets (1-transport, the rest)';
  if (path === '2-source/decode.ts') return "2-source's decoder (isKubeObject, typeMeta)";
  if (path.startsWith('2-source/')) return '2-source: the reflector (step, listing, replace)';
  if (path.startsWith('3-deltas/')) return '3-deltas';
  if (path.startsWith('4-store/')) return "the store's batch (4-store)";
  return `${path.split('/')[0]} (the rest of src)`;
}

const [file, itemsArg] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: node bench/micro/pbStages.ts PROFILE [items]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const node of profile.nodes) {
  byId.set(node.id, node);
  for (const child of node.children ?? []) parent.set(child, node.id);
}
const stageOfNode = new Map<number, string>();
function stage(id: number): string {
  const known = stageOfNode.get(id);
  if (known !== undefined) return known;
  let found = 'other (node, rxjs, the event loop)';
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const s = stageOf(byId.get(at)!.callFrame);
    if (s !== undefined) {
      found = s;
      break;
    }
  }
  stageOfNode.set(id, found);
  return found;
}
const totals = new Map<string, number>();
let all = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]!)!;
  const name = node.callFrame.functionName;
  // Idle time, and the profiler's own start/stop, are not the contender's work (as bench/profile.ts counts).
  if (name === '(idle)' || node.callFrame.url === 'node:inspector') continue;
  const us = profile.timeDeltas[i] ?? 0;
  const s = stage(node.id);
  totals.set(s, (totals.get(s) ?? 0) + us);
  all += us;
}
const items = itemsArg === undefined ? undefined : Number(itemsArg);
console.log(`${file}: ${(all / 1000).toFixed(0)} ms of main-thread samples${items ? `, ${items} items` : ''}`);
for (const [s, us] of [...totals].sort((a, b) => b[1] - a[1]))
  console.log(
    `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / all).toFixed(1).padStart(5)} %` +
      `${items ? `${(us / items).toFixed(2).padStart(7)} µs/item` : ''}  ${s}`,
  );
