/**
 * Summarizes CPU profiles written by `node bench/run.ts --cpu-prof DIR`:
 * self and inclusive time per function, and self time per package.
 *
 *   node bench/profile.ts DIR/large-100k-rx-watch.cpuprofile [--top 25]
 */
import { readFileSync, realpathSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
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

const root = fileURLToPath(new URL('..', import.meta.url));

export function where(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return '(native)';
  if (url.startsWith('node:')) return 'node';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return relative(root, path);
}

function label(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  const place = where(frame);
  // Another copy of src/ (a run named rx@DIR) is ours too: shown from its src/ on.
  const ours =
    place.startsWith('src/') || place.startsWith('bench/')
      ? place
      : place.includes('/src/')
        ? place.slice(place.lastIndexOf('/src/') + 1)
        : undefined;
  return ours ? `${name} ${ours}:${frame.lineNumber + 1}` : `${name} [${place}]`;
}

export function summarize(profile: CpuProfile) {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    let id: number | undefined = profile.samples[i]!;
    const leaf = byId.get(id)!;
    // Idle time, and the profiler's own start/stop (node:inspector), are not the contender's work.
    if (leaf.callFrame.functionName === '(idle)' || leaf.callFrame.url === 'node:inspector') continue;
    total += dt;
    const leafLabel = label(leaf.callFrame);
    self.set(leafLabel, (self.get(leafLabel) ?? 0) + dt);
    const place = where(leaf.callFrame);
    const pkg = leaf.callFrame.functionName.startsWith('(')
      ? leaf.callFrame.functionName
      : place.includes('/src/')
        ? place.slice(place.lastIndexOf('/src/') + 1)
        : place;
    packages.set(pkg, (packages.get(pkg) ?? 0) + dt);
    const seen = new Set<string>();
    while (id !== undefined) {
      const l = label(byId.get(id)!.callFrame);
      if (!seen.has(l)) {
        seen.add(l);
        inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
      }
      id = parent.get(id);
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { total, self: sorted(self), inclusive: sorted(inclusive), packages: sorted(packages) };
}

/** Whether this file is the one node was asked to run: by its real path (node runs a symlink's target, argv keeps the link). */
function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === import.meta.filename;
  } catch {
    return false;
  }
}

if (isMain()) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
  // The files: every argument but the options (`--top` and its value; without `--top`, the first file was taken for it).
  const files = args.filter((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1));
  for (const file of files) {
    const s = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
    const pct = (ms: number) => `${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / s.total).toFixed(1).padStart(5)}%`;
    console.log(`\n## ${file}: ${s.total.toFixed(0)} ms of samples (idle excluded)\n\nself time by package:`);
    for (const [name, ms] of s.packages.slice(0, 12)) console.log(`${pct(ms)}  ${name}`);
    console.log('\nself time by function:');
    for (const [name, ms] of s.self.slice(0, top)) console.log(`${pct(ms)}  ${name}`);
    console.log('\ninclusive time, our code (src/):');
    for (const [name, ms] of s.inclusive.filter(([n]) => / src\//.test(n)).slice(0, top)) console.log(`${pct(ms)}  ${name}`);
  }
}
