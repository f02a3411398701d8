/**
 * `rx-informer record|replay|trim --help` (or `-h`): the command's part of `--help`, and the options it names.
 */
import { HELP } from './args.ts';
import { isRecordCommand } from './recordArgs.ts';
import { isReplayCommand } from './replayArgs.ts';
import { isTrimCommand } from './trimCommand.ts';

/**
 * The options each command takes, as HELP names them: its own (HELP's options of record, replay and trim), then the
 * shared ones (HELP's options; `-o` there is `--output`, which record and trim do not take).
 */
const FLAGS: Record<'record' | 'replay' | 'trim', { readonly own: readonly string[]; readonly shared: readonly string[] }> = {
  record: {
    own: ['-o', '--max-bytes', '--duration', '--no-redact', '--encoding'],
    shared: ['-n', '-l', '--field-selector', '--kubeconfig', '--context', '--encoding'],
  },
  replay: { own: ['--from'], shared: ['--output', '--utc', '--fields', '--ignore'] },
  trim: { own: ['-o', '--from', '--resource'], shared: [] },
};

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

/** The command's lines of HELP's usage, then its options: record, replay and trim's own first, then the shared ones. */
function helpOf(command: 'record' | 'replay' | 'trim'): string {
  const lines = HELP.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`  rx-informer ${command} `));
  let end = start + 1;
  while (end < lines.length && lines[end] !== '' && !lines[end]!.startsWith('  rx-informer ')) end++;
  const usage = lines.slice(start, end);
  const options: string[] = [];
  const sections = [
    ['Options of record, replay and trim:', FLAGS[command].own],
    ['Options:', FLAGS[command].shared],
  ] as const;
  for (const [title, flags] of sections) {
    for (const entry of entries(lines, title)) {
      const head = entry[0]!.slice(0, 25);
      if (flags.some((flag) => new RegExp(`(^|[ ,])${flag}\\b`).test(head))) options.push(...entry);
    }
  }
  const blocks = [
    ['Usage:', ...usage],
    ['Options:', ...options],
  ];
  return `${blocks.map((block) => block.join('\n')).join('\n\n')}\n\n\`rx-informer --help\` lists every command; docs/cli.md describes each option.\n`;
}

/** The help `argv` asks for, when it is `record`, `replay` or `trim` with `--help` or `-h` (before any `--`). */
export function commandHelp(argv: readonly string[]): string | undefined {
  const end = argv.indexOf('--');
  const flags = end < 0 ? argv : argv.slice(0, end);
  if (!flags.includes('--help') && !flags.includes('-h')) return undefined;
  if (isRecordCommand(argv)) return helpOf('record');
  if (isReplayCommand(argv)) return helpOf('replay');
  if (isTrimCommand(argv)) return helpOf('trim');
  return undefined;
}
