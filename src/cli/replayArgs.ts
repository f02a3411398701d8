/**
 * `rx-informer replay`'s command line, apart from the command (cli.ts imports this at start: it stays light).
 */
import { parseArgs } from 'node:util';
import { parseFieldPath } from '../internal.ts';
import { parseArgsError, splitPatterns } from './args.ts';
import { printable } from './format.ts';
import { parseWindow } from './recordArgs.ts';
import { unknownOption } from './suggest.ts';

/** The parser's options: `--help` (commandHelp.ts) shows the entries of HELP that name them. */
export const REPLAY_OPTIONS = {
  output: { type: 'string', short: 'o', default: 'pretty' },
  utc: { type: 'boolean' },
  fields: { type: 'string', multiple: true },
  ignore: { type: 'string', multiple: true },
  from: { type: 'string' },
  to: { type: 'string' },
  'show-secret-values': { type: 'boolean' },
} as const;
const options = REPLAY_OPTIONS;

export interface ReplayCommandOptions {
  readonly file: string;
  readonly output: 'pretty' | 'json';
  readonly utc: boolean;
  readonly fields?: readonly string[];
  readonly ignore?: readonly string[];
  /** Print the changes from this far into the recording (ms), up to `toMs`. */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** `--show-secret-values`: print Secret values in clear (default: redacted, as `watch` does). */
  readonly showSecretValues?: boolean;
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
  const unknown = unknownOption(argv, options);
  if (unknown !== undefined) return `replay: ${unknown}`;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    return `replay: ${parseArgsError(argv, options, error)}`;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 2) return 'replay: name one trace file (e.g. `rx-informer replay trace.jsonl`)';
  if (values.output !== 'pretty' && values.output !== 'json') return `--output must be pretty or json, not "${printable(values.output)}"`;
  const window = parseWindow('replay', values);
  if (typeof window === 'string') return window;
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
    ...(values['show-secret-values'] === true ? { showSecretValues: true } : {}),
  };
}
