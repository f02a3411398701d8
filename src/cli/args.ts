import { parseArgs } from 'node:util';
import { isIP } from 'node:net';
import { parseSinkUrl, type SinkTarget } from './sinkUrl.ts';
import { parseFieldPath } from '../internal.ts';
import { type Compression, type Encoding } from '../pipeline.ts';
import { printable } from './format.ts';
import { watchCommand } from './invocation.ts';
import { didYouMean, unknownOption } from './suggest.ts';

/** `a,b["x,y"]` → `a`, `b["x,y"]`: commas outside brackets separate patterns. */
export function splitPatterns(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']') depth = Math.max(0, depth - 1);
    else if (text[i] === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((p) => p.trim()).filter(Boolean);
}

export const HELP = `rx-informer — watch Kubernetes objects change, as a diff stream

Usage:
  rx-informer watch [RESOURCE... | --all] [-n NS[,NS...] | -A] [-l SELECTOR] [--field-selector S]
                    [--kubeconfig PATH] [--context NAME] [-o pretty|json] [--utc]
                    [--webhook URL]... [--slack URL]... [--show-secret-values]
                    [--fields PATTERN]... [--ignore PATTERN]... [--metrics-port N [--metrics-address ADDR]]
                    [--max-list-bytes SIZE] [--max-list-total-bytes SIZE] [--max-line-bytes SIZE]
                    [--max-error-body-bytes SIZE] [--max-document-bytes SIZE] [--compression gzip|none]
                    [--encoding json|protobuf|auto]
      Lists the resources named (or --all), then prints one line per change, with a compact diff for
      updates, and sends each to the sinks; runs until Ctrl-C.
  rx-informer start [--kubeconfig PATH] [--context NAME] [--churn-interval MS] [--write-kubeconfig FILE]
                    [watch options]
      With no --kubeconfig/--context: starts the built-in API-server emulator with live churn
      and injected faults, and watches everything on it. With one: \`watch --all\` on that cluster.
  rx-informer record RESOURCE... -o FILE [-n NS] [-l SELECTOR] [--field-selector S] [--kubeconfig PATH]
                    [--context NAME] [--max-bytes SIZE] [--duration D] [--no-redact] [--encoding E]
      Writes what the informers' list and watch requests saw to FILE (a JSON Lines trace, for
      replayListWatch in rx-informer/testing; docs/testing.md). Secret values redacted unless
      --no-redact. Stops at --max-bytes (e.g. 50Mi), after --duration (90s, 5m), or on Ctrl-C or
      SIGTERM: the file always ends with a whole line.
  rx-informer replay FILE [-o pretty|json] [--utc] [--fields PATTERN]... [--ignore PATTERN]...
                    [--from T] [--to T] [--show-secret-values]
      Prints the changes a trace recorded as \`watch\` would have, at their recorded times, Secret values
      redacted; --from and --to (90s, 5m: time into the recording) print a window.
  rx-informer trim FILE [--from T] [--to T] [--resource R] -o OUT
      Writes the window of a trace that still replays: it starts with a list holding what the
      informer knew at the first watch at or after --from.

Resources are named by plural, singular, kind or short name (pods, pod, Pod, po; deployments.apps).

Options:
  --all                  every resource that can be listed and watched (custom resources too)
  -n, --namespace NS     these namespaces only (comma-separated or repeated)
  -A, --all-namespaces   all namespaces (the default)
  -l, --selector SEL     label selector, e.g. app=web,tier!=db
  --field-selector SEL   field selector, e.g. status.phase=Running
  --kubeconfig PATH      kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)
  --context NAME         kubeconfig context
  -o, --output FORMAT    pretty (default) or json (one JSON object per event)
  --utc                  times in UTC (default: local time)
  --webhook URL          also POST each event as JSON to URL (repeatable)
  --slack URL            also post each change as a line to a Slack incoming webhook (repeatable)
  --show-secret-values   print and send Secret values in clear (default: redacted)
  --fields PATTERN       diff only these fields, e.g. 'spec.**', 'metadata.labels', '**.image' (repeatable)
  --ignore PATTERN       leave these fields out of diffs, e.g. status (repeatable; resourceVersion and
                         managedFields are always left out)
  --metrics-port N       serve /healthz, /livez, /readyz and /metrics on port N (of every interface)
  --metrics-address ADDR with --metrics-port: listen on this address only, e.g. 127.0.0.1
  --max-list-bytes SIZE  largest list page read (default 256Mi); SIZE is bytes, or with Ki, Mi or Gi
  --max-list-total-bytes SIZE
                         largest list read, all its pages together (default: an eighth of the heap limit,
                         about 512Mi at Node's default heap limit; node --max-old-space-size moves it)
  --max-line-bytes SIZE  largest watch event (one line) read (default 16Mi)
  --max-error-body-bytes SIZE
                         largest error response (a Status) read (default 1Mi)
  --max-document-bytes SIZE
                         largest discovery document read (default 4Mi)
  --compression gzip|none
                         ask the server for gzip (the default) or for no compression (in the cluster, on a
                         fast network); default: none if the kubeconfig's cluster sets disable-compression
  --encoding json|protobuf|auto
                         the wire encoding of lists and watches: json (the default); protobuf, decoded lazily,
                         for the built-in kinds that have it (core/v1, apps/v1, coordination.k8s.io/v1: pods,
                         deployments, …; every other resource, custom ones included, stays JSON); auto:
                         protobuf only for a watch of more than 16 namespaces (read cluster-wide, most dropped)
  --churn-interval MS    the built-in demo's pace: milliseconds between its writes (default 500)
  --write-kubeconfig FILE
                         the built-in demo: write a kubeconfig for its emulator to FILE (replaced if there,
                         mode 0600), for \`watch --kubeconfig FILE\`, \`record\` or kubectl in another terminal
  -w, --watch            accepted for kubectl habits; watching is what this command does
  --version              the version
  -h, --help             this text

Options of record, replay and trim:
  -o FILE                record, trim: the trace to write (replay's -o is --output)
  -n, --namespace NS     record: this one namespace (default: all)
  --max-bytes SIZE       record: stop before the trace passes SIZE, e.g. 50Mi (its header and stop line
                         included: a SIZE that cannot hold them is refused, exit 1)
  --duration D           record: stop after D (90s, 5m, 1h)
  --no-redact            record: write Secret values in clear (default: redacted; a warning says so)
  --from T, --to T       replay, trim: a window, as time into the recording (0, 500ms, 90s, 5m, 1h);
                         --to before --from is refused (exit 2)
  --resource R           trim: keep this one resource of a trace that holds several
  --show-secret-values   replay: print Secret values in clear (default: redacted, as watch does)
  --encoding E           record: the wire encoding of its lists and watches: json (the default); protobuf for
                         the built-in kinds that have it (others stay JSON), as for watch; auto is JSON here
                         (record reads one namespace, or all at once). The trace is the same either way.

Exit codes: 0 stdout closed (e.g. | head); 1 error; 2 bad usage; 129 SIGHUP; 130 Ctrl-C; 143 SIGTERM.
`;

/**
 * `rx-informer watch`'s options, long names (docs/cli.md describes each): `watch --help` (commandHelp.ts) shows the
 * entries of HELP that name them.
 */
export const WATCH_OPTIONS = {
  all: { type: 'boolean' },
  namespace: { type: 'string', short: 'n', multiple: true },
  'all-namespaces': { type: 'boolean', short: 'A' },
  selector: { type: 'string', short: 'l' },
  'field-selector': { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', short: 'o', default: 'pretty' },
  utc: { type: 'boolean' },
  webhook: { type: 'string', multiple: true },
  slack: { type: 'string', multiple: true },
  'show-secret-values': { type: 'boolean' },
  watch: { type: 'boolean', short: 'w' },
  version: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  fields: { type: 'string', multiple: true },
  ignore: { type: 'string', multiple: true },
  'metrics-port': { type: 'string' },
  'metrics-address': { type: 'string' },
  'max-list-bytes': { type: 'string' },
  'max-list-total-bytes': { type: 'string' },
  'max-line-bytes': { type: 'string' },
  'max-error-body-bytes': { type: 'string' },
  'max-document-bytes': { type: 'string' },
  compression: { type: 'string' },
  encoding: { type: 'string' },
} as const;

/** `rx-informer start`'s: watch's, the built-in demo's pace, and where to write a kubeconfig for its emulator. */
export const START_OPTIONS = { ...WATCH_OPTIONS, 'churn-interval': { type: 'string' }, 'write-kubeconfig': { type: 'string' } } as const;
/** What the parser of watch and start reads (a flag of start's only is refused after `watch`). */
const options = START_OPTIONS;

/** Every option the command line takes, long names (`--help` and docs/cli.md describe each: spec/cli/help.spec.ts checks). */
export const OPTION_NAMES: readonly string[] = Object.keys(options);

/** The byte limits the CLI can raise: flag → the transport option it sets (and a `ResponseTooLarge` names). */
export const BYTE_LIMIT_FLAGS = {
  'max-list-bytes': 'maxListBytes',
  'max-list-total-bytes': 'maxListTotalBytes',
  'max-line-bytes': 'maxLineBytes',
  'max-error-body-bytes': 'maxErrorBodyBytes',
  'max-document-bytes': 'maxDocumentBytes',
} as const;

/** A transport byte limit the CLI can set. */
export type ByteLimitOption = (typeof BYTE_LIMIT_FLAGS)[keyof typeof BYTE_LIMIT_FLAGS];

const UNITS: Readonly<Record<string, number>> = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/**
 * `512Mi` → 536870912: a whole number of bytes, or of KiB, MiB or GiB (`Ki`, `Mi`, `Gi`, as Kubernetes quantities
 * write them); at least 1. Undefined for anything else.
 */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d{1,15})(Ki|Mi|Gi)?$/.exec(text.trim());
  if (!match) return undefined;
  const bytes = Number(match[1]) * UNITS[match[2] ?? '']!;
  return bytes >= 1 && Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** What the command line asks for, checked. */
export interface CliOptions {
  readonly command: 'watch' | 'start';
  readonly resources: readonly string[];
  readonly all: boolean;
  readonly namespaces: readonly string[];
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly output: 'pretty' | 'json';
  readonly utc: boolean;
  readonly showSecretValues: boolean;
  readonly webhooks: readonly SinkTarget[];
  readonly slacks: readonly SinkTarget[];
  /** Field patterns to diff (`--fields`) and to leave out (`--ignore`), checked. */
  readonly fields?: readonly string[];
  readonly ignore?: readonly string[];
  /** Serve probes and metrics on this port. */
  readonly metricsPort?: number;
  /** `--metrics-address`: where the probe server listens (default: every interface). */
  readonly metricsAddress?: string;
  /** The byte limits given (`--max-list-bytes` …), as transport options. */
  readonly byteLimits?: Readonly<Partial<Record<ByteLimitOption, number>>>;
  /** `--compression`, when given (it wins over the kubeconfig's `disable-compression`). */
  readonly compression?: Compression;
  /** `--encoding`, when given: the transport's `http.encoding` (see {@link encodingOptions}). */
  readonly encoding?: Encoding;
  /** The demo's churn period (ms), `--churn-interval`. */
  readonly churnIntervalMs?: number;
  /** `--write-kubeconfig`: where the demo writes a kubeconfig for its emulator. */
  readonly writeKubeconfig?: string;
}

export type CommandLine =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly options: CliOptions }
  /** Exit 2 with this message (one line) and the pointer to `--help` (invocation.ts's `usageHint`). */
  | { readonly kind: 'usage'; readonly message: string };

/** A namespace name as the API server accepts it (RFC 1123 label): also keeps the name out of harm's way in URLs. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A parser's options, as parseArgs takes them: each command's (WATCH_OPTIONS, RECORD_OPTIONS, …). */
type ParserOptions = Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string }>>;

/**
 * What is wrong with the options of a command line for the `parser` of its command, in our words (not parseArgs'
 * own text): an unknown option (with its did-you-mean), a value missing or given to a flag that takes none, a value
 * that starts with "-" (parseArgs' "argument is ambiguous"), with how to give one: `--duration=-5s`.
 */
export function badOption(argv: readonly string[], parser: ParserOptions = options): string | undefined {
  const { tokens } = parseArgs({ args: [...argv], options: parser, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const known = parser[token.name];
    if (!known) return unknownOption(argv, parser);
    const shown = token.rawName.startsWith('--') ? token.rawName : `${token.rawName}/--${token.name}`;
    if (known.type === 'boolean' && token.value !== undefined) return `${shown} takes no value`;
    if (known.type === 'string') {
      if (token.value === undefined) return `${shown} needs a value`;
      if (!token.inlineValue && token.value.startsWith('-')) {
        return `${shown} needs a value (to give one that starts with "-", write ${token.rawName}=${token.value})`;
      }
    }
  }
  return undefined;
}

/**
 * The one message for what parseArgs threw when it parsed `argv` strictly with `parser` (watch, start, record, replay,
 * trim): {@link badOption}'s words, or, for anything it does not know, the first line of parseArgs' own.
 */
export function parseArgsError(argv: readonly string[], parser: ParserOptions, error: unknown): string {
  return (
    badOption(argv, parser) ??
    `cannot read the command line: ${error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)}`
  );
}

/** Parses and checks the command line, sink URLs included, before anything touches the network. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  // A mistyped command is said first: the flags after it may be the other command's (`recrod pods --duration 5m`).
  const typo = commandTypo(argv);
  if (typo !== undefined) return { kind: 'usage', message: typo };
  const bad = badOption(argv);
  if (bad !== undefined) return { kind: 'usage', message: bad };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    // badOption has said everything parseArgs can object to; this is a net, in our words all the same.
    return { kind: 'usage', message: parseArgsError(argv, options, error) };
  }
  const { values, positionals } = parsed;
  // `rx-informer help` is `--help`, as kubectl's and git's `help` are.
  if (values.help || positionals[0] === 'help') return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const [command, ...resources] = positionals;
  const wrong = commandProblem(command, resources, values);
  if (wrong !== undefined) return { kind: 'usage', message: wrong };
  // commandProblem has said this; it tells TypeScript which command it is.
  if (command !== 'watch' && command !== 'start') return { kind: 'usage', message: unknownCommand(String(command)) };
  if (values.output !== 'pretty' && values.output !== 'json')
    return { kind: 'usage', message: `--output must be pretty or json, not "${values.output}"` };
  const namespaces = [...new Set((values.namespace ?? []).flatMap((n) => n.split(',')).map((n) => n.trim()))];
  const badNamespace = namespaces.find((n) => !NAMESPACE.test(n));
  if (badNamespace !== undefined)
    return { kind: 'usage', message: `-n: "${badNamespace}" is not a namespace name (lower-case letters, digits and "-")` };
  if (namespaces.length > 0 && values['all-namespaces'])
    return { kind: 'usage', message: '-n and -A/--all-namespaces contradict each other: give one' };
  const targets = (flag: string, urls: readonly string[] | undefined) => {
    const out: SinkTarget[] = [];
    for (const url of urls ?? []) {
      const result = parseSinkUrl(flag, url);
      if (!result.ok) return result.error;
      out.push(result.target);
    }
    return out;
  };
  const webhooks = targets('--webhook', values.webhook);
  if (typeof webhooks === 'string') return { kind: 'usage', message: webhooks };
  const slacks = targets('--slack', values.slack);
  if (typeof slacks === 'string') return { kind: 'usage', message: slacks };
  const patterns = (flag: string, given: readonly string[] | undefined): string[] | string => {
    const out = (given ?? []).flatMap(splitPatterns);
    for (const pattern of out) {
      try {
        parseFieldPath(pattern.startsWith('!') ? pattern.slice(1) : pattern);
      } catch {
        return `${flag}: "${printable(pattern)}" is not a field pattern (e.g. spec.replicas, metadata.labels, spec.**, **.image)`;
      }
    }
    return out;
  };
  const fields = patterns('--fields', values.fields);
  if (typeof fields === 'string') return { kind: 'usage', message: fields };
  const ignore = patterns('--ignore', values.ignore);
  if (typeof ignore === 'string') return { kind: 'usage', message: ignore };
  const probe = probeFlags(values['metrics-port'], values['metrics-address']);
  if (typeof probe === 'string') return { kind: 'usage', message: probe };
  const { metricsPort, metricsAddress } = probe;
  const byteLimits: Partial<Record<ByteLimitOption, number>> = {};
  for (const [flag, option] of Object.entries(BYTE_LIMIT_FLAGS) as [keyof typeof BYTE_LIMIT_FLAGS, ByteLimitOption][]) {
    const given = values[flag];
    if (given === undefined) continue;
    const bytes = parseByteSize(given);
    if (bytes === undefined)
      return {
        kind: 'usage',
        message: `--${flag}: "${printable(given)}" is not a size (a whole number of bytes, or with Ki, Mi or Gi: 512Mi)`,
      };
    byteLimits[option] = bytes;
  }
  const wire = wireFlags(values.compression, values.encoding);
  if (typeof wire === 'string') return { kind: 'usage', message: wire };
  let churnIntervalMs: number | undefined;
  if (values['churn-interval'] !== undefined) {
    churnIntervalMs = Number(values['churn-interval']);
    if (!Number.isFinite(churnIntervalMs) || churnIntervalMs <= 0)
      return { kind: 'usage', message: '--churn-interval must be a positive number of milliseconds' };
  }
  return {
    kind: 'run',
    options: {
      command,
      resources,
      all: values.all === true || command === 'start',
      namespaces,
      ...(values.selector !== undefined ? { labelSelector: values.selector } : {}),
      ...(values['field-selector'] !== undefined ? { fieldSelector: values['field-selector'] } : {}),
      ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
      ...(values.context !== undefined ? { context: values.context } : {}),
      output: values.output,
      utc: values.utc === true,
      showSecretValues: values['show-secret-values'] === true,
      webhooks,
      slacks,
      ...(churnIntervalMs !== undefined ? { churnIntervalMs } : {}),
      ...(values['write-kubeconfig'] !== undefined ? { writeKubeconfig: values['write-kubeconfig'] } : {}),
      ...(fields.length > 0 ? { fields } : {}),
      ...(ignore.length > 0 ? { ignore } : {}),
      ...(metricsPort !== undefined ? { metricsPort } : {}),
      ...(metricsAddress !== undefined ? { metricsAddress } : {}),
      ...(Object.keys(byteLimits).length > 0 ? { byteLimits } : {}),
      ...wire,
    },
  };
}

/** What is wrong with the command and its resource names, in words, or undefined. */
function commandProblem(
  command: string | undefined,
  resources: readonly string[],
  values: {
    readonly all?: boolean;
    readonly 'churn-interval'?: string;
    readonly 'write-kubeconfig'?: string;
    readonly kubeconfig?: string;
    readonly context?: string;
  },
): string | undefined {
  if (!command) return 'name a command: watch, start, record, replay or trim';
  if (command !== 'watch' && command !== 'start') return unknownCommand(command);
  if (command === 'start' && resources.length > 0) {
    // `npm start -- watch pods` runs `start watch pods`: the names are what follows `watch`.
    const names = (resources[0] === 'watch' ? resources.slice(1) : resources).join(' ') || 'RESOURCE...';
    return `start takes no resource names (it watches everything); to watch some, use \`${watchCommand(names)}\``;
  }
  // kubectl's `delete pods --all` means every pod; ours means every resource: `watch pods --all` would drop `pods` unsaid.
  if (command === 'watch' && resources.length > 0 && values.all)
    return (
      `--all watches every resource that can be listed (Secrets included) and takes no resource names; ` +
      `to watch ${printable(resources.join(' '))} in all namespaces, use \`${watchCommand(`${resources.join(' ')} -A`)}\` (all namespaces is the default)`
    );
  if (command === 'watch' && values['churn-interval'] !== undefined)
    return "--churn-interval is an option of start (the built-in demo's pace), not of watch";
  if (values['write-kubeconfig'] !== undefined) {
    if (command === 'watch')
      return "--write-kubeconfig is an option of start (a kubeconfig for the built-in demo's emulator), not of watch";
    if (values['write-kubeconfig'] === '') return '--write-kubeconfig needs a file name';
    if (values.kubeconfig !== undefined || values.context !== undefined)
      return '--write-kubeconfig writes a kubeconfig for the built-in demo, which --kubeconfig/--context replace: give one';
  }
  if (command === 'watch' && resources.length === 0 && !values.all)
    return 'name at least one resource (e.g. `pods deployments`) or use --all';
  return undefined;
}

/** The commands, as `--help` lists them. */
export const COMMANDS = ['watch', 'start', 'record', 'replay', 'trim'] as const;

function unknownCommand(command: string): string {
  return `unknown command "${printable(command)}" (the commands are watch, start, record, replay and trim)${didYouMean(
    command,
    COMMANDS.map((c) => [c]),
  )}`;
}

/** What is wrong with the command line's first word, when it is a typo of a command (`wacth`), else undefined. */
function commandTypo(argv: readonly string[]): string | undefined {
  const [command] = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false }).positionals;
  if (command === undefined || command === 'help' || (COMMANDS as readonly string[]).includes(command)) return undefined;
  return didYouMean(
    command,
    COMMANDS.map((c) => [c]),
  )
    ? unknownCommand(command)
    : undefined;
}

/** `--compression` and `--encoding`, checked (as given: absent when not), or what is wrong with them. */
function wireFlags(
  compression: string | undefined,
  encoding: string | undefined,
): { readonly compression?: Compression; readonly encoding?: Encoding } | string {
  if (compression !== undefined && compression !== 'gzip' && compression !== 'none')
    return `--compression must be gzip or none, not "${printable(compression)}"`;
  const parsed = parseEncoding(encoding);
  if (parsed === null) return `--encoding must be json, protobuf or auto, not "${printable(encoding!)}"`;
  return { ...(compression !== undefined ? { compression } : {}), ...(parsed !== undefined ? { encoding: parsed } : {}) };
}

const ENCODINGS: readonly Encoding[] = ['json', 'protobuf', 'auto'];

/** `--encoding`'s value: undefined when not given, null when it is not one of json, protobuf, auto. */
export function parseEncoding(given: string | undefined): Encoding | undefined | null {
  if (given === undefined) return undefined;
  return ENCODINGS.find((e) => e === given) ?? null;
}

/**
 * The transport options `--encoding` sets. `protobuf` turns on `lazyDecode` too: the library reads protobuf only
 * into lazy objects (eager decoding keeps JSON, which measured faster), and lazy objects read, print and diff as
 * plain ones. `auto` is the library's own (protobuf where objects are dropped by key: the many-namespace watch).
 * Resources the protobuf schema does not know stay JSON, as in the library: nothing to refuse.
 */
export function encodingOptions(encoding: Encoding | undefined): { readonly encoding?: Encoding; readonly lazyDecode?: true } {
  if (encoding === undefined) return {};
  return encoding === 'protobuf' ? { encoding, lazyDecode: true } : { encoding };
}

/** `--metrics-port` and `--metrics-address`, or what is wrong with them. */
function probeFlags(
  port: string | undefined,
  address: string | undefined,
): { readonly metricsPort: number | undefined; readonly metricsAddress: string | undefined } | string {
  const metricsPort = port === undefined ? undefined : Number(port);
  if (port !== undefined && (!/^\d+$/.test(port) || metricsPort! > 65535)) return '--metrics-port must be a port number (0-65535)';
  const metricsAddress = parseAddress(address);
  if (metricsAddress === null) return '--metrics-address must be an IP address or a host name, e.g. 127.0.0.1';
  if (metricsAddress !== undefined && metricsPort === undefined) return '--metrics-address needs --metrics-port (the port to serve on)';
  return { metricsPort, metricsAddress };
}

/** `--metrics-address`: an IPv4 or IPv6 address (`[::1]` as well) or a host name; null when it is neither. */
function parseAddress(given: string | undefined): string | undefined | null {
  if (given === undefined) return undefined;
  const bare = /^\[(.*)\]$/.exec(given)?.[1] ?? given;
  if (isIP(bare) !== 0) return bare;
  return /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(bare)
    ? bare
    : null;
}
