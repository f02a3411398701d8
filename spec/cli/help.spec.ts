/**
 * Every option the command line takes is described where a user looks: `--help`, and docs/cli.md
 * (a new flag without either fails here).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliRuns } from './support.ts';
import { HELP, OPTION_NAMES, parseCommandLine } from '../../src/cli/args.ts';
import { commandHelp, headFlags, parserFlags } from '../../src/cli/commandHelp.ts';

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

const COMMANDS = ['watch', 'start', 'record', 'replay', 'trim'] as const;

describe('each command --help', () => {
  it('prints its usage, the options it takes and an example, exit 0, -h too, wherever it is; --help alone all of it', async () => {
    const lines = [
      ['record', '--help'],
      ['replay', '-h'],
      ['trim', 'trace.jsonl', '--from', '5m', '--help'],
      ['record', 'pods', '-h', '--bogus'],
      ['--help', 'replay'],
      ['watch', '--help'],
      ['watch', 'pods', '-n', 'shop', '-h'],
      ['start', '--help'],
      ['--context', 'kind-dev', '-h', 'start'],
      ['--help'],
    ];
    const results = await cliRuns(lines);
    const commands = ['record', 'replay', 'trim', 'record', 'replay', 'watch', 'watch', 'start', 'start'];
    results.forEach(({ code, out, err }, i) => {
      expect(code, lines[i]!.join(' ')).toBe(0);
      expect(err).toEqual([]);
      if (i === commands.length) return;
      const others = COMMANDS.filter((c) => c !== commands[i]).join('|');
      expect(out[0]).toBe('Usage:');
      expect(out[1]).toMatch(new RegExp(`^  rx-informer ${commands[i]} `));
      expect(out.join('\n')).not.toMatch(new RegExp(`rx-informer (${others}) `));
      const examples = out.slice(out.indexOf('Examples:') + 1, out.lastIndexOf(''));
      expect(examples.length).toBeGreaterThan(0);
      for (const example of examples) expect(example).toMatch(new RegExp(`^  rx-informer ${commands[i]} `));
      expect(out.at(-1)).toMatch(/`rx-informer --help` lists every command/);
    });
    expect(results[0]!.out.join('\n')).toMatch(/--kubeconfig PATH {6}kubeconfig file/);
    expect(results[1]!.out.join('\n')).toMatch(/--utc {18}times in UTC/);
    expect(results[5]!.out.join('\n')).toMatch(/prints one line per change/);
    expect(results[7]!.out.join('\n')).toMatch(/starts the built-in API-server emulator/);
    // --help alone: the overview, every command.
    expect(results[commands.length]!.out.join('\n')).toBe(HELP.trimEnd());
  }, 30_000);

  it("--churn-interval is start's only (the demo's pace): watch refuses it, as its help does not name it", () => {
    expect(parseCommandLine(['watch', 'pods', '--churn-interval', '50'])).toEqual({
      kind: 'usage',
      message: "--churn-interval is an option of start (the built-in demo's pace), not of watch",
    });
  });

  it.each(COMMANDS)("%s --help describes every flag its usage names, and no other command's -o", (command) => {
    const help = commandHelp([command, '--help'])!;
    const [usage, options] = help.split('\nOptions:\n');
    const named = new Set(usage!.match(/(?<=[[ ])--?[a-z][a-z-]*/g));
    expect(named.size).toBeGreaterThan(2);
    const heads = options!.split('\n').filter((line) => /^ {2}-/.test(line));
    for (const flag of named)
      expect(
        heads.some((head) => new RegExp(`(^|[ ,])${flag}\\b`).test(head.slice(0, 25))),
        flag,
      ).toBe(true);
    // record and trim write a file with -o; only replay's -o is --output.
    expect(heads.some((head) => head.startsWith('  -o, --output'))).toBe(command !== 'record' && command !== 'trim');
  });

  it.each(COMMANDS)(
    '%s --help describes every option its parser takes (long name or short), and names no flag it does not take',
    (command) => {
      const help = commandHelp([command, '--help'])!;
      const heads = help
        .split('\nOptions:\n')[1]!
        .split('\n')
        .filter((line) => /^ {2}-/.test(line));
      const described = new Set(heads.flatMap(headFlags));
      const options = parserFlags(command);
      // Each option of the parser by one of its names (record's and trim's -o FILE is --output's short name).
      for (const names of options)
        expect(
          names.some((name) => described.has(name)),
          `${command}: ${names.join(', ')}`,
        ).toBe(true);
      const accepted = options.flat();
      for (const flag of described) expect(accepted, `${command} --help names ${flag}`).toContain(flag);
    },
  );

  it("record --help describes record's -n (one namespace), not watch's (several, comma-separated or repeated)", () => {
    const help = commandHelp(['record', '--help'])!;
    expect(help.split('\n').filter((line) => line.startsWith('  -n, --namespace'))).toEqual([
      expect.stringMatching(/^ {2}-n, --namespace NS {5}record: this one namespace \(default: all\)$/),
    ]);
    expect(help).not.toMatch(/comma-separated or repeated/);
    expect(commandHelp(['watch', '--help'])).toMatch(/-n, --namespace NS {5}these namespaces only \(comma-separated or repeated\)/);
  });

  it("record --help describes record's --encoding, not watch's (auto's many-namespace rule does not apply to record)", () => {
    const help = commandHelp(['record', '--help'])!;
    const encoding = help.split('\n').filter((line) => line.startsWith('  --encoding'));
    expect(encoding).toEqual([expect.stringMatching(/^ {2}--encoding E {11}record: the wire encoding of its lists and watches/)]);
    expect(help).toMatch(/auto is JSON here/);
    expect(help).not.toMatch(/16 namespaces/);
  });
});
