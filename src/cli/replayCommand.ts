/**
 * `rx-informer replay trace.jsonl`: plays a trace into one informer per resource in virtual time and
 * prints the changes as `watch` would (pretty or `-o json`, field diffs, `--fields`/`--ignore`), stamped with
 * the recorded times; `--from`/`--to` print a window (the informers still replay the whole trace before it).
 */
import { VirtualAction, VirtualTimeScheduler, Subscription } from 'rxjs';
import {
  ConfigMap,
  Deployment,
  Event,
  Lease,
  Namespace,
  Node,
  Pod,
  ReplicaSet,
  Secret,
  Service,
  customResource,
  informer,
  type InformerEvent,
  type KubeObject,
  type Resource,
} from '../index.ts';
import type { Trace } from '../pipeline.ts';
import { replayListWatch } from '../testing/replayListWatch.ts';
import { jsonLine } from './format.ts';
import type { ReplayCommandOptions } from './replayArgs.ts';
import { prettyLine, toRecord } from './record.ts';

/** How long after the trace's last line a replay may run before it is stopped. */
const REPLAY_HORIZON_MS = 10 * 60_000;

const BUILTIN: readonly Resource<KubeObject>[] = [Pod, ConfigMap, Secret, Service, Namespace, Node, Event, Deployment, ReplicaSet, Lease];

/** A resource for a name in a trace's header: unstructured (objects kept as recorded), its kind from the watch events. */
function resourceFor(trace: Trace, name: string): Resource<KubeObject> {
  const builtin = BUILTIN.find((r) => (r.group ? `${r.plural}.${r.group}` : r.plural) === name);
  if (builtin) return builtin;
  const [plural = name, ...group] = name.split('.');
  const watches = new Set(trace.lines.flatMap((l) => (l.type === 'watch' && (l.resource ?? name) === name ? [l.id] : [])));
  const kinds = trace.lines.flatMap((l) =>
    l.type === 'event' && watches.has(l.id) && l.event.type !== 'ERROR' ? [(l.event.object as { kind?: unknown } | null)?.kind] : [],
  );
  const kind = kinds.find((k): k is string => typeof k === 'string' && k !== 'Bookmark') ?? plural;
  return customResource({ group: group.join('.'), version: 'v1', plural, kind, namespaced: true });
}

/** The changes of a replay, in recorded order, with the time into the recording each came at. */
function replayed(trace: Trace): {
  readonly changes: readonly { readonly at: number; readonly resource: string; readonly event: InformerEvent<KubeObject> }[];
  readonly mismatches: readonly string[];
} {
  const scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);
  const out: { at: number; resource: string; event: InformerEvent<KubeObject> }[] = [];
  const mismatches: string[] = [];
  const all = new Subscription();
  let running = trace.header.resources.length;
  for (const name of trace.header.resources) {
    const replay = replayListWatch(trace, { scheduler, resource: name, timeline: 'recorded' });
    all.add(() => mismatches.push(...replay.mismatches.map((m) => `${name}: ${m.message}`)));
    const one = informer(replay, resourceFor(trace, name), { scheduler }).events$.subscribe((event) =>
      out.push({ at: scheduler.now(), resource: name, event }),
    );
    all.add(one);
    // Each informer stops when its part of the trace is played; the clock stops when all have.
    all.add(replay.finished$.subscribe(() => (one.unsubscribe(), --running === 0 && all.unsubscribe())));
  }
  // A replay that went astray (its informers wait for answers the trace does not have) stops at the horizon.
  all.add(scheduler.schedule(() => all.unsubscribe(), (trace.lines.at(-1)?.at ?? 0) + REPLAY_HORIZON_MS));
  scheduler.flush();
  all.unsubscribe();
  return { changes: out, mismatches };
}

/**
 * Prints a trace's changes; returns the requests the trace could not answer (the replay stopped there:
 * the informers asked for something else, e.g. after a timer of theirs the recorded one did not fire).
 */
export function replayCommand(trace: Trace, command: ReplayCommandOptions, out: (line: string) => void): readonly string[] {
  const start = Date.parse(trace.header.startedAt);
  const { changes, mismatches } = replayed(trace);
  for (const { at, resource, event } of changes) {
    if (event.isInInitialList || at < (command.fromMs ?? 0) || at > (command.toMs ?? Infinity)) continue;
    const when = new Date(start + at);
    const r = toRecord(resource, event, when, {
      utc: command.utc,
      ...(command.fields ? { fields: command.fields } : {}),
      ...(command.ignore ? { ignore: command.ignore } : {}),
    });
    if (!r) continue;
    out(command.output === 'json' ? jsonLine(r) : prettyLine(r, when, command.utc));
  }
  return mismatches;
}
