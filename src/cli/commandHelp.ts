/**
 * `rx-informer record|replay|trim --help` (or `-h`): the command's part of `--help`, and the options it names.
 */
import { HELP } from './args.ts';
import { isRecordCommand } from './recordArgs.ts';
import { isReplayCommand } from './replayArgs.ts';
import { isTrimCommand } from './trimCommand.ts';

/** The command's lines of HELP's usage, then the lines of HELP's options that its usage names. */
function helpOf(command: string): string {
  const lines = HELP.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`  rx-informer ${command} `));
  let end = start + 1;
  while (end < lines.length && lines[end] !== '' && !lines[end]!.startsWith('  rx-informer ')) end++;
  const usage = lines.slice(start, end);
  const named = new Set(usage.join(' ').match(/--[a-z-]+/g));
  const options: string[] = [];
  let keep = false;
  for (const line of lines.slice(lines.indexOf('Options:') + 1)) {
    if (line === '') break;
    // An option's first line starts two spaces in; its continuation lines further in.
    if (/^ {2}-/.test(line)) keep = [...named].some((flag) => new RegExp(`${flag}\\b`).test(line.slice(0, 25)));
    if (keep) options.push(line);
  }
  const blocks = [['Usage:', ...usage], ...(options.length ? [['Options:', ...options]] : [])];
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
