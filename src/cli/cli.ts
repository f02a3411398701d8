import { readFileSync } from 'node:fs';
import { HELP, USAGE_HINT, parseCommandLine, type CliOptions } from './args.ts';
import { printable } from './format.ts';
import { SecretScrubber } from './secrets.ts';

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

/** A one-line message for stderr; never a stack trace, never a secret. */
const err = (line: string) => void process.stderr.write(`${printable(scrubber.scrub(line))}\n`);

/**
 * The command line: parses and checks everything first (exit 2, before the
 * Kubernetes client is even loaded), then runs until Ctrl-C (130), SIGTERM
 * (143), a closed stdout (0, quietly, like kubectl), or an error nothing can
 * retry past (1). SIGHUP (129) flushes the sinks as SIGTERM does.
 */
export async function run(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(argv);
  switch (line.kind) {
    case 'help':
      process.stdout.write(HELP);
      return EXIT.ok;
    case 'version':
      process.stdout.write(`rx-informer ${version()}\n`);
      return EXIT.ok;
    case 'usage':
      err(`error: ${line.message}`);
      err(USAGE_HINT);
      return EXIT.usage;
    case 'run':
      return watch(line.options);
  }
}

async function watch(options: CliOptions): Promise<number> {
  // Listen before anything slow starts, so Ctrl-C means 130 at every stage.
  const ended = new Promise<number>((resolve) => {
    process.once('SIGINT', () => resolve(EXIT.interrupted));
    process.once('SIGTERM', () => resolve(EXIT.terminated));
    // The terminal went away (ssh dropped, tmux pane closed): flush the sinks as for SIGTERM.
    process.once('SIGHUP', () => resolve(EXIT.hangup));
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') return resolve(EXIT.ok);
      err(`error: cannot write to stdout: ${error.message}`);
      resolve(EXIT.error);
    });
  });
  // stderr has nowhere to report its own failure; without a listener it would crash the process.
  process.stderr.on('error', () => undefined);
  let stdoutOpen = true;
  void ended.then(() => (stdoutOpen = false));

  // `start` without a kubeconfig runs the built-in demo on rx-informer-emulator, a package of its own (optional).
  const demo = options.command === 'start' && !options.kubeconfig && !options.context ? await import('./demo.ts') : undefined;
  const emulator = await demo?.loadEmulator();
  if (demo && emulator === undefined) {
    err(`error: ${demo.EMULATOR_MISSING}`);
    return EXIT.usage;
  }

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
  if (options.showSecretValues) err('warning: --show-secret-values: Secret values will be printed and sent to every sink in clear');

  const [{ UsageError, watchCommand }, { webhookSink }, { slackSink }, { HttpSink }, { readKubeConfig }] = await Promise.all([
    import('./watch.ts'),
    import('./webhook.ts'),
    import('./slack.ts'),
    import('./sink.ts'),
    import('./kubeconfig.ts'),
  ]);
  const report = (text: string) => err(`! ${text}`);
  const sinks = [...options.webhooks.map((t) => webhookSink(t, report)), ...options.slacks.map((t) => slackSink(t, report))];
  const cleanup: (() => Promise<void> | void)[] = [];
  const stopped = (code: number) => ({ stopped: code }) as const;
  let outcome: { stopped: number } | { failed: string };
  try {
    let kc;
    let compression = options.compression;
    if (demo && emulator) {
      const running = await demo.startDemo(
        { log: err, ...(options.churnIntervalMs ? { churnIntervalMs: options.churnIntervalMs } : {}) },
        emulator,
      );
      cleanup.push(running.close);
      kc = running.kubeConfig;
    } else {
      const loaded = readKubeConfig(options.kubeconfig, options.context, scrubber);
      kc = loaded.kubeConfig;
      // --compression wins over the cluster's disable-compression.
      if (compression === undefined && loaded.disableCompression) compression = 'none';
    }
    const terminal = {
      out: (text: string) => void (stdoutOpen && process.stdout.write(`${text}\n`)),
      err,
      ...(process.stderr.isTTY
        ? { status: (text: string) => void process.stderr.write(`\r\x1b[2K${printable(scrubber.scrub(text))}`) }
        : {}),
    };
    const started = await Promise.race([
      watchCommand(
        kc,
        {
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
        },
        terminal,
      ),
      ended.then(stopped),
    ]);
    if ('stopped' in started) {
      outcome = started;
    } else {
      cleanup.unshift(started.stop);
      outcome = await Promise.race([started.failed.then((sentence) => ({ failed: sentence })), ended.then(stopped)]);
    }
  } catch (error) {
    outcome = { failed: error instanceof UsageError || error instanceof Error ? error.message : String(error) };
  }

  // A second Ctrl-C during the flush means now.
  process.once('SIGINT', () => process.exit(EXIT.interrupted));
  for (const step of cleanup) {
    try {
      await step();
    } catch (error) {
      err(`! while stopping: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const deadline = Date.now() + FLUSH_MS;
  const summaries = await Promise.all(sinks.map(async (sink) => HttpSink.describe(sink.label, await sink.close(deadline))));
  for (const summary of summaries) err(summary);
  if ('failed' in outcome) {
    err(`error: ${outcome.failed}`);
    return EXIT.error;
  }
  return outcome.stopped;
}
