/**
 * The CLI's hints for a mistyped option (`--kubeconfg`): the nearest name is src/util/closestName.ts's, shared with the
 * library's option checks.
 */
import { parseArgs } from 'node:util';
import { closestName } from '../util/closestName.ts';

export { closestName, didYouMean, editDistance } from '../util/closestName.ts';

type OptionSet = Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string; readonly multiple?: boolean }>>;

/**
 * The hint for an unknown option as written (`--kubeconfg`, `-kubeconfig`, `kubeconfig=x` is not an option): the
 * command's long option closest to its name, dashes left out (`--namespaces` → `--namespace`, `-context` →
 * `--context`). Single-letter options get none (every letter is one typo from every other).
 */
export function optionHint(raw: string, options: OptionSet): string {
  const name = raw.replace(/^--?/, '').split('=')[0] ?? '';
  if (name.length < 2) return '';
  const long = Object.keys(options);
  if (raw.startsWith('-') && !raw.startsWith('--') && long.includes(name)) return `; did you mean --${name}?`;
  const closest = closestName(
    name,
    long.map((n) => [n]),
  );
  return closest === undefined ? '' : `; did you mean --${closest}?`;
}

/**
 * `unknown option --duratoin; did you mean --duration?`: the first option of `argv` that `options` does not have
 * (for the parsers of record, replay and trim, whose strict parse would say it in Node's words), or undefined.
 */
export function unknownOption(argv: readonly string[], options: OptionSet): string | undefined {
  const { tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name in options) continue;
    // A group of short options (`-kubeconfig`) is read letter by letter: the hint is for the word as written.
    return `unknown option ${token.rawName}${optionHint(token.rawName.startsWith('--') ? token.rawName : (argv[token.index] ?? token.rawName), options)}`;
  }
  return undefined;
}
