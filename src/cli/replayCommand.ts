/**
 * `rx-informer replay trace.jsonl`: plays a trace into one informer per resource in virtual time and
 * prints the changes as `watch` would (pretty or `-o json`, field diffs, `--fields`/`--ignore`), stamped with
 * the recorded times; `--from`/`--to` print a window (the informers still replay the whole trace before it).
 */
import { parseArgs } from 'node:util';
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
import { parseFieldPath } from '../internal.ts';
import type { Trace } from '../pipeline.ts';
import { replayListWatch } from '../testing/replayListWatch.ts';
import { splitPatterns } from './args.ts';
import { jsonLine, printable } from './format.ts';
import { prettyLine, toRecord } from './record.ts';
import { parseDuration } from './recordArgs.ts';

const options = {
  output: { type: 'string', short: 'o', default: 'pretty' },
  utc: { type: 'boolean' },
  fields: { type: 'string', multiple: true },
  ignore: { type: 'string', multiple: true },
  from: { type: 'string' },
  to: { type: 'string' },
} as const;

/** How long after the trace's last line a replay may run before it is stopped. */
const REPLAY_HORIZON_MS = 10 * 60_000;

export const REPLAY_OPTION_NAMES: readonly string[] = Object.keys(options);

export interface ReplayCommandOptions {
  readonly file: string;
  readonly output: 'pretty' | 'json';
  readonly utc: boolean;
  readonly fields?: readonly string[];
  readonly ignore?: readonly string[];
  /** Print the changes from this far into the recording (ms), up to `toMs`. */
  readonly fromMs?: number;
  readonly toMs?: number;
}

/** Whether the command line is `rx-informer replay …`. */
export function isReplayCommand(argv: readonly string[]): boolean {
  return parseArgs({ args: [...argv], options, allowPositionals: true, strict: false }).positionals[0] === 'replay';
}

function patterns(flag: string, given: readonly string[] | undefined): string[] | string {
  const out = (given ?? []).flatMap(splitPatterns);
  for (const pattern of out) {
    try {
      parseFieldPath(pattern.startsWith('!') ? pattern.slice(1) : pattern);
    } catch {
      return `${flag}: "${printable(pattern)}" is not a field pattern (e.g. spec.replicas, metadata.labels, spec.**)`;
    }
  }
  return out;
}

/** Parses `rx-informer replay FILE [...]`: the options, or a one-line usage message. */
export function parseReplayLine(argv: readonly string[]): ReplayCommandOptions | string {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    return `replay: ${error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)}`;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 2) return 'replay: name one trace file (e.g. `rx-informer replay trace.jsonl`)';
  if (values.output !== 'pretty' && values.output !== 'json') return `--output must be pretty or json, not "${printable(values.output)}"`;
  const window: { fromMs?: number; toMs?: number } = {};
  for (const flag of ['from', 'to'] as const) {
    const given = values[flag];
    if (given === undefined) continue;
    const ms = given === '0' ? 0 : parseDuration(given);
    if (ms === undefined) return `--${flag}: "${printable(given)}" is not a time into the recording (90s, 5m, 1h, 500ms)`;
    window[flag === 'from' ? 'fromMs' : 'toMs'] = ms;
  }
  const fields = patterns('--fields', values.fields);
  if (typeof fields === 'string') return fields;
  const ignore = patterns('--ignore', values.ignore);
  if (typeof ignore === 'string') return ignore;
  return {
    file: positionals[1]!,
    output: values.output,
    utc: values.utc === true,
    ...(fields.length ? { fields } : {}),
    ...(ignore.length ? { ignore } : {}),
    ...window,
  };
}

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
