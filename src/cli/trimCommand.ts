/**
 * `rx-informer trim FILE --from T [--to T] -o OUT`: a window of a trace that still replays (see `trimTrace`).
 */
import { parseArgs } from 'node:util';
import { parseArgsError } from './args.ts';
import { parseWindow } from './recordArgs.ts';
import { unknownOption } from './suggest.ts';

/** The parser's options: `--help` (commandHelp.ts) shows the entries of HELP that name them. */
export const TRIM_OPTIONS = {
  from: { type: 'string' },
  to: { type: 'string' },
  output: { type: 'string', short: 'o' },
  resource: { type: 'string' },
} as const;
const options = TRIM_OPTIONS;

export interface TrimCommandOptions {
  readonly file: string;
  readonly out: string;
  readonly fromMs?: number;
  readonly toMs?: number;
  readonly resource?: string;
}

/** Whether the command line is `rx-informer trim …`. */
export function isTrimCommand(argv: readonly string[]): boolean {
  return parseArgs({ args: [...argv], options, allowPositionals: true, strict: false }).positionals[0] === 'trim';
}

/** Parses `rx-informer trim FILE [...]`: the options, or a one-line usage message. */
export function parseTrimLine(argv: readonly string[]): TrimCommandOptions | string {
  const unknown = unknownOption(argv, options);
  if (unknown !== undefined) return `trim: ${unknown}`;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    return `trim: ${parseArgsError(argv, options, error)}`;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 2) return 'trim: name one trace file (e.g. `rx-informer trim trace.jsonl --from 5m -o window.jsonl`)';
  if (!values.output) return 'trim: name the file to write with -o FILE';
  const window = parseWindow('trim', values);
  if (typeof window === 'string') return window;
  return { file: positionals[1]!, out: values.output, ...window, ...(values.resource !== undefined ? { resource: values.resource } : {}) };
}
