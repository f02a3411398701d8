import { readFileSync, statSync } from 'node:fs';
import type { Compression } from '../pipeline.ts';
import { HELP, parseCommandLine, type CliOptions } from './args.ts';
import { commandHelp } from './commandHelp.ts';
import type { DemoEmulator } from './demo.ts';
import { count, messageOf, printable } from './format.ts';
import { isRecordCommand, parseRecordLine } from './recordArgs.ts';
import { isReplayCommand, parseReplayLine } from './replayArgs.ts';
import { isTrimCommand, parseTrimLine } from './trimCommand.ts';
import { startCommand, usageHint, watchCommand as watchWithArgs } from './invocation.ts';
import { SecretScrubber } from './secrets.ts';
import { StatusLine } from './statusLine.ts';
import type { Terminal, WatchCommand } from './watch.ts';
import type { EventSink } from './webhook.ts';

/** How long sinks get to deliver what is queued once we are told to stop. */
const FLUSH_MS = 3000;

/** Exit codes, as kubectl and shells use them. */
export const EXIT = { ok: 0, error: 1, usage: 2, hangup: 129, interrupted: 130, terminated: 143 } as const;

/** From package.json, two levels up from src/cli and dist/cli alike. */
function version(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    return typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string'
      ? pkg.version
      : 'unknown (package.json has no version)';
  } catch (error) {
    return `unknown (cannot read package.json: ${error instanceof Error ? error.message : String(error)})`;
  }
}

/** Every secret the configuration holds (kubeconfig, sink URLs): no line on stderr carries one. */
const scrubber = new SecretScrubber();

/** stderr: on a TTY, a line clears the status line first, and the status is cut to the width. */
const stderr = new StatusLine(
  (text) => void process.stderr.write(text),
  () => process.stderr.columns,
);

/** A one-line message for stderr; never a stack trace, never a secret. */
const err = (line: string) => stderr.line(printable(scrubber.scrub(line)));

/** A command line at fault: its message and the pointer to `--help` on stderr, exit 2. */
function usageError(message: string): number {
  err(`error: ${message}`);
  err(usageHint());
  return EXIT.usage;
}

/**
 * The command line: parses and checks everything first (exit 2, before the
 * Kubernetes client is even loaded), then runs until Ctrl-C (130), SIGTERM
 * (143), a closed stdout (0, quietly, like kubectl), or an error nothing can
 * retry past (1). SIGHUP (129) flushes the sinks as SIGTERM does.
 */
export async function run(argv: readonly string[]): Promise<number> {
  const help = commandHelp(argv);
  if (help !== undefined) {
    process.stdout.write(help);
    return EXIT.ok;
  }
  if (isRecordCommand(argv)) return recordRun(argv);
  if (isReplayCommand(argv)) return replayRun(argv);
  if (isTrimCommand(argv)) return trimRun(argv);
  const line = parseCommandLine(argv);
  switch (line.kind) {
    case 'help':
      process.stdout.write(HELP);
      return EXIT.ok;
    case 'version':
      process.stdout.write(`rx-informer ${version()}\n`);
      return EXIT.ok;
    case 'usage':
      return usageError(line.message);
    case 'run':
      return watch(line.options);
  }
}

/** The signals that end a run, and the exit code each means (a shell's 128 + the signal's number). */
const SIGNALS = { SIGINT: EXIT.interrupted, SIGTERM: EXIT.terminated, SIGHUP: EXIT.hangup } as const;

/**
 * What a write error of stdout means, for `watch` and `replay` alike: nothing for a reader that went away (`EPIPE`,
 * `| head`: the run ends quietly, 0, as kubectl's does), else the line to say (the run fails, 1: a full disk).
 */
function stdoutFailure(error: NodeJS.ErrnoException | null | undefined): string | undefined {
  if (error === null || error === undefined || error.code === 'EPIPE') return undefined;
  return `error: cannot write to stdout: ${error.message}`;
}

/**
 * How a run ends from outside: Ctrl-C, SIGTERM, SIGHUP (the terminal went away: the sinks are flushed as for
 * SIGTERM), or stdout closed (0, quietly, like kubectl) or failing (1). Listening starts at once, so that
 * Ctrl-C means 130 at every stage.
 */
class Ending {
  readonly code: Promise<number>;
  private ended = false;

  constructor() {
    this.code = new Promise<number>((resolve) => {
      const end = (code: number) => {
        this.ended = true;
        resolve(code);
      };
      for (const [signal, code] of Object.entries(SIGNALS)) process.once(signal, () => end(code));
      process.stdout.on('error', (error: NodeJS.ErrnoException) => {
        const failure = stdoutFailure(error);
        if (failure === undefined) return end(EXIT.ok);
        err(failure);
        end(EXIT.error);
      });
    });
  }

  /** Nothing more goes to stdout once the run is ending. */
  get over(): boolean {
    return this.ended;
  }
}

/** Sink URLs with credentials: the Basic-auth string and its parts are scrubbed from stderr; over http:// they are warned about. */
function guardSinkCredentials(options: CliOptions): void {
  for (const [flag, targets] of [
    ['--webhook', options.webhooks],
    ['--slack', options.slacks],
  ] as const) {
    for (const target of targets) {
      const authorization = target.headers['authorization'];
      if (authorization === undefined) continue;
      const basic = authorization.replace(/^Basic /, '');
      const credentials = Buffer.from(basic, 'base64').toString('utf8');
      for (const secret of [authorization, basic, credentials, credentials.slice(credentials.indexOf(':') + 1)]) scrubber.add(secret);
      if (target.origin.startsWith('http://')) {
        err(
          `warning: ${flag} ${target.origin}: the user name and password in the URL go over plain http://, readable by anyone on the way; use https://`,
        );
      }
    }
  }
}

/** The sinks the command line asks for; two to one origin are told apart by their place (`webhook #2 http://host`). */
async function sinksFor(options: CliOptions): Promise<EventSink[]> {
  const [{ webhookSink }, { slackSink }, { sinkLabels }] = await Promise.all([
    import('./webhook.ts'),
    import('./slack.ts'),
    import('./sinkUrl.ts'),
  ]);
  const report = (text: string) => err(`! ${text}`);
  const [webhooks, slacks] = [sinkLabels('webhook', options.webhooks), sinkLabels('slack', options.slacks)];
  return [
    ...options.webhooks.map((t, i) => webhookSink(t, report, { label: webhooks[i]! })),
    ...options.slacks.map((t, i) => slackSink(t, report, { label: slacks[i]! })),
  ];
}

/** The watch command's options, from the command line's. */
function watchOptions(options: CliOptions, sinks: readonly EventSink[], compression: Compression | undefined): WatchCommand {
  return {
    resources: options.resources,
    all: options.all,
    namespaces: options.namespaces,
    ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}),
    ...(options.fieldSelector !== undefined ? { fieldSelector: options.fieldSelector } : {}),
    output: options.output,
    utc: options.utc,
    showSecretValues: options.showSecretValues,
    sinks,
    ...(options.fields ? { fields: options.fields } : {}),
    ...(options.ignore ? { ignore: options.ignore } : {}),
    ...(options.metricsPort !== undefined ? { metricsPort: options.metricsPort } : {}),
    ...(options.metricsAddress !== undefined ? { metricsAddress: options.metricsAddress } : {}),
    ...(options.byteLimits ? { byteLimits: options.byteLimits } : {}),
    ...(compression !== undefined ? { compression } : {}),
    ...(options.encoding !== undefined ? { encoding: options.encoding } : {}),
  };
}

/** stdout for events (until the run ends), stderr for the rest; on a TTY, a status line rewritten in place. */
function terminalFor(ending: Ending): Terminal {
  return {
    out: (text: string) => {
      if (ending.over) return;
      if (process.stdout.isTTY) stderr.clearForOther(); // the same terminal: not onto the status line's end
      process.stdout.write(`${text}\n`);
    },
    err,
    ...(process.stderr.isTTY ? { status: (text: string) => stderr.status(printable(scrubber.scrub(text))) } : {}),
  };
}

type Demo = typeof import('./demo.ts');

/** The command that watches everything through `file`, as typed where the CLI runs. */
const watchWith = (file: string) => watchWithArgs(`--all --kubeconfig ${shellWord(file)}`);
/** `file` as one word of a POSIX shell command (pasted as printed, a path with spaces or quotes stays one argument). */
const shellWord = (file: string) => (/^[\w@%+=:,./-]+$/.test(file) ? file : `'${file.replaceAll("'", `'\\''`)}'`);
type Outcome = { readonly stopped: number } | { readonly failed: string };

/**
 * Connects (the demo's emulator, or the kubeconfig's cluster), watches, and waits for the end: a signal or
 * closed stdout (`stopped`), or a sentence saying why the watch cannot go on (`failed`). What must be undone
 * (the watch, the demo) is pushed onto `cleanup`, last first.
 */
async function watchUntilEnd(
  options: CliOptions,
  demo: { readonly module: Demo; readonly emulator: DemoEmulator } | undefined,
  sinks: readonly EventSink[],
  ending: Ending,
  cleanup: (() => Promise<void> | void)[],
): Promise<Outcome> {
  const [{ watchCommand }, { connectingLine, readKubeConfigInterruptibly }] = await Promise.all([
    import('./watch.ts'),
    import('./kubeconfig.ts'),
  ]);
  const stopped = (code: number) => ({ stopped: code }) as const;
  try {
    let kc;
    let compression = options.compression;
    if (demo) {
      const churn = options.churnIntervalMs ? { churnIntervalMs: options.churnIntervalMs } : {};
      const realCluster = startCommand('--kubeconfig ~/.kube/config');
      const write = options.writeKubeconfig === undefined ? {} : { writeKubeconfig: options.writeKubeconfig, watchWith };
      const running = await demo.module.startDemo({ log: err, realCluster, ...churn, ...write }, demo.emulator);
      cleanup.push(running.close);
      kc = running.kubeConfig;
    } else {
      // A FIFO's writer may never write: Ctrl-C ends the wait.
      const loaded = await Promise.race([
        readKubeConfigInterruptibly(options.kubeconfig, options.context, scrubber),
        ending.code.then(stopped),
      ]);
      if ('stopped' in loaded) return loaded;
      kc = loaded.kubeConfig;
      // --compression wins over the cluster's disable-compression.
      if (compression === undefined && loaded.disableCompression) compression = 'none';
    }
    err(connectingLine(kc));
    const command = watchOptions(options, sinks, compression);
    const started = await Promise.race([watchCommand(kc, command, terminalFor(ending)), ending.code.then(stopped)]);
    if ('stopped' in started) return started;
    cleanup.unshift(started.stop);
    if (demo) void started.synced.then(() => err(demoNext(options.writeKubeconfig)));
    return await Promise.race([started.failed.then((sentence) => ({ failed: sentence })), ending.code.then(stopped)]);
  } catch (error) {
    return { failed: error instanceof Error ? error.message : String(error) };
  }
}

/** The demo's one "try next" line, once synced: watching it from elsewhere (unless --write-kubeconfig was given), and how to stop. */
function demoNext(written: string | undefined): string {
  const elsewhere = `${startCommand('--write-kubeconfig demo.kubeconfig')} writes its kubeconfig, to watch it from another terminal (kubectl too)`;
  return `try next: ${written === undefined ? elsewhere : 'edit objects with kubectl --kubeconfig ' + written}; Ctrl-C stops the demo`;
}

/**
 * Undoes what was started, then gives the sinks until the flush deadline and says what each delivered. A second Ctrl-C
 * during the flush means now: each sink says what it did so far (what is queued counts as unsent), then exit 130.
 */
async function wrapUp(cleanup: readonly (() => Promise<void> | void)[], sinks: readonly EventSink[]): Promise<void> {
  const { HttpSink } = await import('./sink.ts');
  process.once('SIGINT', () => {
    for (const sink of sinks) err(HttpSink.describe(sink.label, sink.summary()));
    process.exit(EXIT.interrupted);
  });
  for (const undo of cleanup) {
    try {
      await undo();
    } catch (error) {
      err(`! while stopping: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const queued = sinks.reduce((n, sink) => n + sink.summary().unsent, 0);
  // The flush may take its FLUSH_MS: said, so that the wait does not look like a hang.
  if (queued > 0) err(`delivering ${count(queued, 'queued event')}… (Ctrl-C again to stop)`);
  const deadline = Date.now() + FLUSH_MS;
  const summaries = await Promise.all(sinks.map(async (sink) => HttpSink.describe(sink.label, await sink.close(deadline))));
  for (const summary of summaries) err(summary);
}

async function watch(options: CliOptions): Promise<number> {
  const ending = new Ending();
  // stderr has nowhere to report its own failure; without a listener it would crash the process.
  process.stderr.on('error', () => undefined);

  // `start` without a kubeconfig runs the built-in demo on rx-informer-emulator, a package of its own (optional).
  const demoAsked = options.command === 'start' && !options.kubeconfig && !options.context;
  // A cold first run spends 10–15 s loading the emulator and the Kubernetes client: said first, so it does not look hung.
  if (demoAsked) err('rx-informer demo: starting…');
  const module = demoAsked ? await import('./demo.ts') : undefined;
  const emulator = await module?.loadEmulator();
  if (module && emulator === undefined) {
    err(`error: ${module.EMULATOR_MISSING}`);
    return EXIT.usage;
  }
  guardSinkCredentials(options);
  if (options.showSecretValues) err('warning: --show-secret-values: Secret values will be printed and sent to every sink in clear');

  const sinks = await sinksFor(options);
  const cleanup: (() => Promise<void> | void)[] = [];
  const outcome = await watchUntilEnd(options, module && emulator ? { module, emulator } : undefined, sinks, ending, cleanup);
  await wrapUp(cleanup, sinks);
  if ('failed' in outcome) {
    err(`error: ${outcome.failed}`);
    return EXIT.error;
  }
  return outcome.stopped;
}

/** `rx-informer record`: until Ctrl-C (130), SIGTERM (143) or a limit (0); the trace ends with its stop line either way. */
async function recordRun(argv: readonly string[]): Promise<number> {
  const options = parseRecordLine(argv);
  if (typeof options === 'string') {
    return usageError(options);
  }
  const ending = new Ending();
  process.stderr.on('error', () => undefined);
  if (!options.redact) err('warning: --no-redact: Secret values will be written to the trace in clear');
  const [{ recordCommand }, { connectingLine, readKubeConfigInterruptibly }] = await Promise.all([
    import('./recordCommand.ts'),
    import('./kubeconfig.ts'),
  ]);
  let recording;
  try {
    // A FIFO's writer may never write: Ctrl-C ends the wait.
    const loaded = await Promise.race([readKubeConfigInterruptibly(options.kubeconfig, options.context, scrubber), ending.code]);
    if (typeof loaded === 'number') {
      err(`stopped before the kubeconfig was read: ${options.file} not written`);
      return loaded;
    }
    const { kubeConfig } = loaded;
    err(connectingLine(kubeConfig));
    // Ctrl-C while the server has not answered discovery (nothing is written before it has) ends the run at once.
    let waiting = false;
    const terminal = { err, waiting: (now: boolean) => void (waiting = now), scrub: (text: string) => scrubber.scrub(text) };
    const started = await Promise.race([recordCommand(kubeConfig, options, terminal), ending.code]);
    if (typeof started === 'number') {
      err(
        waiting
          ? `stopped while waiting for a reader of ${options.file}`
          : `stopped before the server answered: ${options.file} not written`,
      );
      return started;
    }
    recording = started;
  } catch (error) {
    err(`error: ${messageOf(error)}`);
    return EXIT.error;
  }
  let ended = false;
  // Not once the recording stopped (a disk full at the first page: its informer syncs after the stop lines).
  void recording.synced.then(() => ended || recording.writer.stopped || err(`synced; recording to ${options.file} (Ctrl-C to stop)`));
  // A resource that cannot be recorded (a bad selector: 400) fails the run, as it fails `watch`: 1, its sentence.
  const end = await Promise.race([ending.code, recording.stopped.then(() => EXIT.ok), recording.failed]);
  ended = true;
  recording.stop();
  // A pipe's reader still taking what was queued for it: a limit's end waits for it (a Ctrl-C meanwhile does not).
  const late = end === EXIT.ok || typeof end === 'string' ? await Promise.race([recording.drained(), ending.code]) : undefined;
  const { writer, error } = recording;
  err(`stopped (${writer.stopped ?? 'closed'}): ${recording.bytes} bytes written to ${options.file}`);
  if (typeof end === 'string') err(`error: ${end}`);
  // The requests a reader reads are in: stopped there, as at --max-bytes (0), the file reading.
  if (recording.requestCap !== undefined) err(recording.requestCap);
  // A list page longer than a reader reads is not written: the file reads, but holds less than was asked.
  const refused = recording.refusedLine;
  if (refused !== undefined) err(`error: ${refused}`);
  // A full disk: the file ends with the last whole line written (no stop line), and replays.
  if (error !== undefined) err(`error: cannot write ${options.file}: ${messageOf(error)}`);
  // A signal while the reader was still taking the queue: its code (what was not taken is lost).
  if (typeof late === 'number') return late;
  return typeof end === 'string' || error !== undefined || refused !== undefined ? EXIT.error : end;
}

/** Resolves when `stream` has drained, or is closed (a reader gone: nothing more will drain). */
function drainedOrClosed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.errored) return resolve();
    const events = ['drain', 'close', 'error'] as const;
    const done = () => {
      for (const event of events) stream.off(event, done);
      resolve();
    };
    for (const event of events) stream.on(event, done);
  });
}

/**
 * A trace that is there but not a regular file (`<(zcat t.gz)`, a FIFO, a directory): a usage error, said before it is
 * opened (a FIFO's open would wait for a writer). `replay` and `trim` read a trace twice (checked whole, then read a
 * line at a time where the index says), which a pipe cannot give.
 */
function notRegularTrace(file: string, command: 'replay' | 'trim'): string | undefined {
  let regular;
  try {
    regular = statSync(file).isFile();
  } catch {
    return undefined; // not there, or not for us to see: opening it says why
  }
  return regular ? undefined : `${file} is not a regular file: ${command} reads it twice; save it to a file first`;
}

/** `rx-informer replay FILE`: the trace's changes on stdout as `watch` prints them; a trace that cannot be read is 1. */
async function replayRun(argv: readonly string[]): Promise<number> {
  const options = parseReplayLine(argv);
  if (typeof options === 'string') {
    return usageError(options);
  }
  const special = notRegularTrace(options.file, 'replay');
  if (special !== undefined) return usageError(special);
  const [{ replayCommand }, { openTrace }] = await Promise.all([import('./replayCommand.ts'), import('../pipeline.ts')]);
  try {
    // Checked whole first (nothing printed from a trace that is not valid), then read a line at a time as it plays.
    const trace = openTrace(options.file);
    if (options.showSecretValues) err('warning: --show-secret-values: Secret values will be printed in clear');
    const end = trace.length ? trace.atOf(trace.length - 1) : 0;
    // A window past the end prints nothing: say so, rather than an empty success that looks like a quiet cluster.
    if ((options.fromMs ?? 0) > end) err(`! --from is past the end of the recording (${(end / 1000).toFixed(1)} s): nothing to show`);
    const { stdout } = process;
    // Any write error ends the replay; which it was is read from `stdout.errored` at the end (not here: without a
    // listener the error would end the process).
    const gone = () => stdout.destroyed || stdout.errored !== null;
    stdout.on('error', () => undefined);
    const mismatches = await replayCommand(trace, options, (line) => void (gone() || stdout.write(`${line}\n`)), {
      // What the recorded informers met (an object failing its schema): said as `watch` says it, and the replay goes on.
      err,
      // A pipe takes what it can and Node queues the rest: the replay waits while the queue is full.
      pace: {
        backedUp: () => stdout.writableNeedDrain && !gone(),
        drained: () => drainedOrClosed(stdout),
        gone,
      },
    });
    // What is still queued goes out before exit(), which would cut it short.
    if (!gone()) await new Promise<void>((resolve) => stdout.write('', () => resolve()));
    // A reader that goes away (`| head`) ends the replay quietly, as it ends `watch`; another write error is 1.
    const failure = stdoutFailure(stdout.errored);
    if (failure !== undefined) {
      err(failure);
      return EXIT.error;
    }
    for (const mismatch of mismatches) err(`error: ${mismatch}`);
    return mismatches.length ? EXIT.error : EXIT.ok;
  } catch (error) {
    err(`error: ${options.file}: ${messageOf(error)}`);
    return EXIT.error;
  }
}

/**
 * `rx-informer trim FILE --from T [--to T] -o OUT`: the window, written a line at a time; 1 when the trace cannot be
 * read or cut. The cut runs in a worker thread, so that Ctrl-C (130), SIGTERM (143) or SIGHUP (129) stops it at once
 * and leaves neither its temporary file nor a changed `OUT`.
 */
async function trimRun(argv: readonly string[]): Promise<number> {
  const options = parseTrimLine(argv);
  if (typeof options === 'string') {
    return usageError(options);
  }
  const special = notRegularTrace(options.file, 'trim');
  if (special !== undefined) return usageError(special);
  const { trimInWorker } = await import('./trimFile.ts');
  // A FIFO without a reader is waited for (a signal ends the wait): said, so that the wait is not silence.
  const trim = trimInWorker(options.file, options, options.out, () =>
    err(`waiting for a reader of ${options.out} (a FIFO; Ctrl-C to stop)`),
  );
  let signalled: number | undefined;
  const handlers = Object.entries(SIGNALS).map(([signal, code]) => {
    const handler = () => {
      signalled ??= code;
      trim.stop();
    };
    process.on(signal, handler); // on, not once: a second Ctrl-C must not kill the process before the file is removed
    return [signal, handler] as const;
  });
  const outcome = await trim.outcome;
  for (const [signal, handler] of handlers) process.off(signal, handler);
  switch (outcome.kind) {
    case 'done': {
      const { lines, lastAt, startedAt } = outcome.trimmed;
      err(`wrote ${options.out}: ${lines} lines, ${lastAt} ms from ${startedAt}`);
      return EXIT.ok;
    }
    case 'usage':
      return usageError(outcome.message);
    case 'error':
      err(`error: ${outcome.file}: ${outcome.message}`);
      return EXIT.error;
    case 'stopped':
      err(`stopped: ${options.out} not written`);
      return signalled ?? EXIT.interrupted;
  }
}
