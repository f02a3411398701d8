/**
 * Every option the command line takes is described where a user looks: `--help`, and docs/cli.md
 * (a new flag without either fails here).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HELP, OPTION_NAMES, parseCommandLine } from '../../src/cli/args.ts';

const DOCS = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

describe('every option is documented', () => {
  it.each(OPTION_NAMES)('--%s: in --help and in docs/cli.md', (name) => {
    expect(HELP).toMatch(new RegExp(`--${name}\\b`));
    expect(DOCS).toMatch(new RegExp(`--${name}\\b`));
  });

  it('--churn-interval is the demo pace it says', () => {
    const line = parseCommandLine(['start', '--churn-interval', '50']);
    expect(line.kind === 'run' && line.options.churnIntervalMs).toBe(50);
  });
});
