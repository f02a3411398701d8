/**
 * `rx-informer replay trace.jsonl`: plays a trace into one informer per resource in virtual time and
 * prints the changes as `watch` would (pretty or `-o json`, field diffs, `--fields`/`--ignore`), stamped with
 * the recorded times; `--from`/`--to` print a window (the informers still replay the whole trace before it).
 */
import { VirtualAction, VirtualTimeScheduler, Subscription, finalize, type Observable, type SchedulerLike } from 'rxjs';
import { customResource, informer, type InformerError, type InformerEvent, type KubeObject, type Resource } from '../index.ts';
import type { ListWatch, Trace, TraceSource } from '../pipeline.ts';
import { asTraceSource } from '../internal.ts';
import { replayListWatch, type ReplayListWatch } from '../testing/replayListWatch.ts';
import { jsonLine } from './format.ts';
import { problemLine } from './explain.ts';
import type { ReplayCommandOptions } from './replayArgs.ts';
import { prettyLine, secretRedaction, toRecord } from './record.ts';
import { isSecretResource } from '../pipeline.ts';
import { builtinResource } from '../0-model/resources.ts';

/** How long after the trace's last line a replay may run before it is stopped. */
const REPLAY_HORIZON_MS = 10 * 60_000;

/**
 * The resource for each name in a trace's header: a built-in one, else unstructured (objects kept as recorded), its
 * kind from the watch events. One pass for all the names (one per name was resources × lines: audit24).
 */
function resourcesFor(trace: TraceSource): ReadonlyMap<string, Resource<KubeObject>> {
  const out = new Map<string, Resource<KubeObject>>();
  const wanted = new Set<string>();
  for (const name of trace.header.resources) {
    const builtin = builtinResource(name);
    if (builtin) out.set(name, builtin);
    else wanted.add(name);
  }
  const found = new Map<string, { kind: string; version: string | undefined }>();
  // The watches of a wanted resource, by id: its name, or undefined for one naming none (every resource's).
  const watches = new Map<number, string | undefined>();
  // The first event of a watch of it that names a kind, and its apiVersion's version (read one at a time: the trace
  // may be long). The version is the objects' own: a guessed one (`v1` for a CRD served as `v1beta1`) would make
  // every recorded object fail the resource's apiVersion check, and the replay print nothing.
  for (let i = 0; i < trace.length && found.size < wanted.size; i++) {
    const request = trace.requestAt(i);
    if (request?.type === 'watch' && (request.resource === undefined || wanted.has(request.resource)))
      watches.set(request.id, request.resource);
    if (trace.typeOf(i) !== 'event' || !watches.has(trace.idOf(i))) continue;
    const of = watches.get(trace.idOf(i));
    const names = (of === undefined ? [...wanted] : [of]).filter((name) => !found.has(name));
    if (names.length === 0) continue;
    const line = trace.read(i);
    const object =
      line.type === 'event' && line.event.type !== 'ERROR'
        ? (line.event.object as { kind?: unknown; apiVersion?: unknown } | null)
        : undefined;
    if (typeof object?.kind !== 'string' || object.kind === 'Bookmark') continue;
    const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
    const slash = apiVersion.lastIndexOf('/');
    for (const name of names) {
      const group = name.split('.').slice(1).join('.');
      const ours = apiVersion.slice(0, Math.max(slash, 0)) === group && apiVersion.length > slash + 1;
      found.set(name, { kind: object.kind, version: ours ? apiVersion.slice(slash + 1) : undefined });
    }
  }
  trace.release();
  for (const name of wanted) {
    const [plural = name, ...groupParts] = name.split('.');
    const { kind = plural, version = 'v1' } = found.get(name) ?? {};
    out.set(name, customResource({ group: groupParts.join('.'), version, plural, kind, namespaced: true }));
  }
  return out;
}

/** A change of a replay: the time into the recording it came at, and whether its resource is Secrets. */
interface Change {
  readonly at: number;
  readonly resource: string;
  readonly secret: boolean;
  readonly event: InformerEvent<KubeObject>;
}

/** What a replay hands on as it plays: each change, and each fault an informer reports (a resource's name with it). */
interface Played {
  readonly change: (change: Change) => void;
  readonly fault: (at: number, resource: string, secret: boolean, error: InformerError) => void;
}

/** How a paced replay waits for its output: whether the output is backed up, and a promise of its draining. */
export interface Pace {
  readonly backedUp: () => boolean;
  readonly drained: () => Promise<void>;
  /** The reader is gone (a closed pipe): the replay stops there. */
  readonly gone: () => boolean;
}

/**
 * `replay` as it is, and `diverged` called (on the clock, once its informer is through with the request) when it has
 * a mismatch: seen when a request is asked for (one the trace has not) and when one ends (one the informer aborted).
 */
function divergence(replay: ReplayListWatch, scheduler: SchedulerLike, diverged: () => void): ListWatch {
  let seen = false;
  const check = () => {
    if (seen || replay.mismatches.length === 0) return;
    seen = true;
    scheduler.schedule(diverged);
  };
  function watched<O, T>(request: (options: O) => Observable<T>): (options: O) => Observable<T> {
    return (options) => {
      const answer = request(options);
      check();
      return answer.pipe(finalize(check));
    };
  }
  return { list: watched(replay.list), watch: watched(replay.watch) };
}

/**
 * Replays a trace into one informer per resource, handing each change to `each` as it comes, in recorded order;
 * returns the requests the trace could not answer. Without `pace` the virtual clock runs to the end at once; with
 * it, one instant at a time, waiting for the output to drain whenever it is backed up (so what waits to be written
 * stays bounded however slow the reader).
 */
async function replayed(trace: TraceSource, played: Played, pace?: Pace): Promise<readonly string[]> {
  const scheduler = new VirtualTimeScheduler(VirtualAction, Infinity);
  const mismatches: string[] = [];
  const all = new Subscription();
  let running = trace.header.resources.length;
  const resources = resourcesFor(trace);
  for (const name of trace.header.resources) {
    const replay = replayListWatch(trace, { scheduler, resource: name, timeline: 'recorded' });
    all.add(() => mismatches.push(...replay.mismatches.map((m) => `${name}: ${m.message}`)));
    const resource = resources.get(name)!;
    const secret = isSecretResource(resource);
    let one: Subscription | undefined;
    // Each informer stops when its part of the trace is played, or once it diverged (after a mismatch the replay
    // answers nothing: its informer would only time out and ask again, to the horizon); the clock stops when all have.
    const stop = () => {
      if (one?.closed !== false) return;
      one.unsubscribe();
      if (--running === 0) all.unsubscribe();
    };
    // No jitter (`random`): a backoff is its base, so what the recording got after one comes at its recorded time.
    const replaying = informer(divergence(replay, scheduler, stop), resource, {
      scheduler,
      random: () => 0,
      reportUnobservedErrors: false,
    });
    one = new Subscription();
    // What the recorded informer met (an object that fails its schema, a line that does not decode, a recorded 500)
    // is said as `watch` says it; a request the trace cannot answer is not: it is a mismatch, named at the end.
    one.add(
      replaying.errors$.subscribe((error) => {
        if (!replay.mismatches.some((m) => m.message === error.message)) played.fault(scheduler.now(), name, secret, error);
      }),
    );
    one.add(replaying.events$.subscribe((event) => played.change({ at: scheduler.now(), resource: name, secret, event })));
    all.add(one);
    all.add(replay.finished$.subscribe(stop));
  }
  // A replay that went astray (its informers wait for answers the trace does not have) stops at the horizon.
  all.add(scheduler.schedule(() => all.unsubscribe(), (trace.length ? trace.atOf(trace.length - 1) : 0) + REPLAY_HORIZON_MS));
  try {
    if (!pace) scheduler.flush();
    else
      for (let next = scheduler.actions[0]; next && !pace.gone(); next = scheduler.actions[0]) {
        scheduler.maxFrames = next.delay;
        scheduler.flush();
        if (pace.backedUp()) await pace.drained();
      }
  } finally {
    all.unsubscribe();
    trace.release();
  }
  return mismatches;
}

/** Whether a time into the recording is in the window `--from`/`--to` print. */
function inWindow(command: ReplayCommandOptions, at: number): boolean {
  return at >= (command.fromMs ?? 0) && at <= (command.toMs ?? Infinity);
}

function printer(source: TraceSource, command: ReplayCommandOptions, out: (line: string) => void): Played['change'] {
  const start = Date.parse(source.header.startedAt);
  // As `watch` shows them: a trace recorded with --no-redact holds Secret values in clear.
  const redaction = secretRedaction(command.showSecretValues);
  return ({ at, resource, secret, event }) => {
    if (event.isInInitialList || !inWindow(command, at)) return;
    const when = new Date(start + at);
    const redact = redaction(secret);
    const r = toRecord(resource, event, when, {
      utc: command.utc,
      ...(redact ? { redact } : {}),
      ...(command.fields ? { fields: command.fields } : {}),
      ...(command.ignore ? { ignore: command.ignore } : {}),
    });
    if (r) out(command.output === 'json' ? jsonLine(r) : prettyLine(r, when, command.utc));
  };
}

/** Where a replay's lines go besides its changes, and how it waits for their reader. */
export interface ReplayIo {
  /**
   * A line for stderr: a fault an informer met in the window, in `watch`'s words (`! configmaps: ValidationFailed: …`).
   * Default: none.
   */
  readonly err?: (line: string) => void;
  /** Wait for `out`'s reader (the bin's stdout). */
  readonly pace?: Pace;
}

/** What names the server in a replayed fault's words: a trace holds no address. */
const RECORDED_SERVER = '(the recorded server)';

/**
 * Prints a trace's changes as they are replayed (a trace opened with `openTrace` is read a line at a time), and
 * the faults its informers meet to `io.err`; returns the requests the trace could not answer (the replay stopped
 * there: the informers asked for something else, e.g. after a timer of theirs the recorded one did not fire).
 */
export function replayCommand(
  trace: Trace | TraceSource,
  command: ReplayCommandOptions,
  out: (line: string) => void,
  io: ReplayIo = {},
): Promise<readonly string[]> {
  const source = asTraceSource(trace);
  const { err = () => undefined } = io;
  const fault: Played['fault'] = (at, resource, secret, error) => {
    if (inWindow(command, at)) err(problemLine(resource, error, RECORDED_SERVER, secret));
  };
  return replayed(source, { change: printer(source, command, out), fault }, io.pace);
}
