/**
 * `rx-informer watch|start|record|replay|trim --help` (or `-h`): the command's part of `--help`, and the options it
 * names; `rx-informer --help` alone is the whole of it (HELP).
 */
import { parseArgs } from 'node:util';
import { HELP, START_OPTIONS, WATCH_OPTIONS } from './args.ts';
import { isRecordCommand, RECORD_OPTIONS } from './recordArgs.ts';
import { isReplayCommand, REPLAY_OPTIONS } from './replayArgs.ts';
import { isTrimCommand, TRIM_OPTIONS } from './trimCommand.ts';

type Command = 'watch' | 'start' | 'record' | 'replay' | 'trim';

/** Each command's parser options: its help is the entries of HELP that name them (one source: a flag is added once). */
const PARSERS: Record<Command, Readonly<Record<string, { readonly type: string; readonly short?: string }>>> = {
  watch: WATCH_OPTIONS,
  start: START_OPTIONS,
  record: RECORD_OPTIONS,
  replay: REPLAY_OPTIONS,
  trim: TRIM_OPTIONS,
};

const OWN = 'Options of record, replay and trim:';

/** One command line of each command, as a newcomer would start. */
const EXAMPLES: Record<Command, readonly string[]> = {
  watch: [
    'rx-informer watch pods deployments -n shop,payments     # two namespaces of the current context',
    'rx-informer watch --all -o json --kubeconfig ~/.kube/config | jq .',
  ],
  start: [
    'rx-informer start                                       # the built-in demo (rx-informer-emulator)',
    'rx-informer start --write-kubeconfig demo.kubeconfig    # … and a kubeconfig for it: watch, record, kubectl',
    'rx-informer start --context kind-dev                    # watch --all on that cluster',
  ],
  record: ['rx-informer record pods -n shop -o incident.jsonl --max-bytes 50Mi --duration 30m'],
  replay: ['rx-informer replay incident.jsonl --from 10m --to 15m'],
  trim: ['rx-informer trim incident.jsonl --from 10m --to 15m -o window.jsonl'],
};

/** The options a parser takes, each by its names: `--name`, and `-x` for a short one. */
export function parserFlags(command: Command): string[][] {
  return Object.entries(PARSERS[command]).map(([name, option]) => [`--${name}`, ...(option.short ? [`-${option.short}`] : [])]);
}

/** The flags an entry's first line names (in its first 25 characters: `-n, --namespace NS`, `--from T, --to T`). */
export function headFlags(head: string): string[] {
  return head.slice(0, 25).match(/(?<=^|[ ,])--?[a-z][a-z-]*/g) ?? [];
}

/** Whether an entry of HELP's options of record, replay and trim is `command`'s: its text starts `record, trim:`. */
function isOwnEntryOf(head: string, command: Command): boolean {
  const commands = /^((?:record|replay|trim)(?:, (?:record|replay|trim))*):/.exec(head.slice(25).trim())?.[1];
  return commands?.split(', ').includes(command) ?? false;
}

/** The entries (an option's line and the lines continuing it) of HELP's options section under `title`. */
function entries(lines: readonly string[], title: string): string[][] {
  const out: string[][] = [];
  for (const line of lines.slice(lines.indexOf(title) + 1)) {
    if (line === '') break;
    // An option's first line starts two spaces in; its continuation lines further in.
    if (/^ {2}-/.test(line)) out.push([line]);
    else out.at(-1)?.push(line);
  }
  return out;
}

/**
 * The command's lines of HELP's usage, then its options: its own entries of HELP's options of record, replay and
 * trim (those whose text names it), then the entries of HELP's options that name a flag of its parser and none of
 * those already shown (`-o` there is `--output`, which record and trim do not take; `--encoding` there is watch's).
 */
function helpOf(command: Command): string {
  const lines = HELP.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`  rx-informer ${command} `));
  let end = start + 1;
  while (end < lines.length && lines[end] !== '' && !lines[end]!.startsWith('  rx-informer ')) end++;
  const usage = lines.slice(start, end);
  const own = entries(lines, OWN).filter((entry) => isOwnEntryOf(entry[0]!, command));
  const shown = new Set(own.flatMap((entry) => headFlags(entry[0]!)));
  const flags = new Set(parserFlags(command).flat());
  const shared = entries(lines, 'Options:').filter((entry) => {
    const named = headFlags(entry[0]!);
    return named.some((flag) => flags.has(flag)) && !named.some((flag) => shown.has(flag));
  });
  const blocks = [
    ['Usage:', ...usage],
    ['Options:', ...[...own, ...shared].flat()],
    ['Examples:', ...EXAMPLES[command].map((line) => `  ${line}`)],
  ];
  return `${blocks.map((block) => block.join('\n')).join('\n\n')}\n\n\`rx-informer --help\` lists every command; docs/cli.md describes each option.\n`;
}

/** The help `argv` asks for, when it names a command with `--help` or `-h` (before any `--`); `--help` alone is HELP's. */
export function commandHelp(argv: readonly string[]): string | undefined {
  const end = argv.indexOf('--');
  const flags = end < 0 ? argv : argv.slice(0, end);
  if (!flags.includes('--help') && !flags.includes('-h')) return undefined;
  if (isRecordCommand(argv)) return helpOf('record');
  if (isReplayCommand(argv)) return helpOf('replay');
  if (isTrimCommand(argv)) return helpOf('trim');
  const [command] = parseArgs({ args: [...argv], options: START_OPTIONS, allowPositionals: true, strict: false }).positionals;
  return command === 'watch' || command === 'start' ? helpOf(command) : undefined;
}
