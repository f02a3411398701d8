import { parseArgs } from 'node:util';
import { parseArgsError, parseByteSize, parseEncoding } from './args.ts';
import type { Encoding } from '../pipeline.ts';
import { printable } from './format.ts';
import { unknownOption } from './suggest.ts';

/**
 * `rx-informer record`'s options, long names (docs/cli.md describes each): `--help` (commandHelp.ts) shows the
 * entries of HELP that name them.
 */
export const RECORD_OPTIONS = {
  // Several are read so as to be refused (`-n a -n b` is `-n a,b`): one namespace, or all.
  namespace: { type: 'string', short: 'n', multiple: true },
  selector: { type: 'string', short: 'l' },
  'field-selector': { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'max-bytes': { type: 'string' },
  duration: { type: 'string' },
  'no-redact': { type: 'boolean' },
  encoding: { type: 'string' },
} as const;
const options = RECORD_OPTIONS;

/** What `rx-informer record` is asked for, checked. */
export interface RecordCommandOptions {
  readonly resources: readonly string[];
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  /** The trace file (written from scratch). */
  readonly file: string;
  readonly maxBytes?: number;
  readonly durationMs?: number;
  /** `--no-redact`: Secret values in clear. */
  readonly redact: boolean;
  /** `--encoding`: the wire encoding of the recorded lists and watches (the trace holds the objects, either way). */
  readonly encoding?: Encoding;
}

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `5m`, `1h`, `500ms` → milliseconds; undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})(ms|s|m|h)$/.exec(text.trim());
  const ms = match ? Number(match[1]) * DURATION_UNITS[match[2]!]! : 0;
  return ms > 0 ? ms : undefined;
}

/** Whether the command line is `rx-informer record …` (its first word, whatever options come before it). */
export function isRecordCommand(argv: readonly string[]): boolean {
  const { positionals } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false });
  return positionals[0] === 'record';
}

/** Why `-n a -n b` and `-n a,b` are refused: record reads one namespace, or all at once. */
const ONE_NAMESPACE = 'record takes one namespace, or none for all of them';

/**
 * `-n a,b` said as one namespace would be, with what record takes when the names are several; `-n a -n b` quoted as
 * typed, each value on its own (not joined into a `"a,b"` the user never wrote).
 */
function badNamespace(given: readonly string[]): string {
  if (given.length > 1) return `-n given ${given.length} times (${given.map((n) => `"${printable(n)}"`).join(', ')}): ${ONE_NAMESPACE}`;
  const several = given[0]!.includes(',') ? ` (${ONE_NAMESPACE})` : '';
  return `-n: "${printable(given[0]!)}" is not a namespace name (lower-case letters, digits and "-")${several}`;
}

/** Parses `rx-informer record RESOURCE... -o FILE [...]`: the options, or a one-line usage message. */
export function parseRecordLine(argv: readonly string[]): RecordCommandOptions | string {
  const unknown = unknownOption(argv, options);
  if (unknown !== undefined) return `record: ${unknown}`;
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    return `record: ${parseArgsError(argv, options, error)}`;
  }
  const { values, positionals } = parsed;
  const resources = positionals
    .slice(1)
    .flatMap((n) => n.split(','))
    .filter(Boolean);
  if (resources.length === 0) return 'record: name at least one resource (e.g. `rx-informer record pods -o trace.jsonl`)';
  if (!values.output) return 'record: name the trace file with -o FILE';
  const namespace = values.namespace?.join(',');
  if (namespace !== undefined && (values.namespace!.length > 1 || !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)))
    return badNamespace(values.namespace!);
  const maxBytes = values['max-bytes'] === undefined ? undefined : parseByteSize(values['max-bytes']);
  if (values['max-bytes'] !== undefined && maxBytes === undefined)
    return `--max-bytes: "${printable(values['max-bytes'])}" is not a size (a whole number of bytes, or with Ki, Mi or Gi: 50Mi)`;
  const durationMs = values.duration === undefined ? undefined : parseDuration(values.duration);
  if (values.duration !== undefined && durationMs === undefined)
    return `--duration: "${printable(values.duration)}" is not a duration (a whole number with ms, s, m or h: 90s, 5m)`;
  const encoding = parseEncoding(values.encoding);
  if (encoding === null) return `--encoding must be json, protobuf or auto, not "${printable(values.encoding!)}"`;
  return {
    resources,
    file: values.output,
    redact: values['no-redact'] !== true,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(values.selector !== undefined ? { labelSelector: values.selector } : {}),
    ...(values['field-selector'] !== undefined ? { fieldSelector: values['field-selector'] } : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(encoding !== undefined ? { encoding } : {}),
  };
}

/**
 * `--from` / `--to` of `replay` and `trim` (`command`): times into the recording (ms), or a one-line usage message
 * (a time that does not read, or a window that ends before it starts).
 */
export function parseWindow(
  command: 'replay' | 'trim',
  values: { readonly from?: string; readonly to?: string },
): { fromMs?: number; toMs?: number } | string {
  const window: { fromMs?: number; toMs?: number } = {};
  for (const flag of ['from', 'to'] as const) {
    const given = values[flag];
    if (given === undefined) continue;
    // A window may start at the start: `0`, `0s`, `0ms` (a duration elsewhere must be more than nothing).
    const ms = /^0+(ms|s|m|h)?$/.test(given.trim()) ? 0 : parseDuration(given);
    if (ms === undefined) return `--${flag}: "${printable(given)}" is not a time into the recording (0, 90s, 5m, 1h, 500ms)`;
    window[flag === 'from' ? 'fromMs' : 'toMs'] = ms;
  }
  if (window.toMs !== undefined && window.toMs < (window.fromMs ?? 0))
    return `${command}: the window ends (--to ${window.toMs} ms) before it starts (--from ${window.fromMs ?? 0} ms)`;
  return window;
}
