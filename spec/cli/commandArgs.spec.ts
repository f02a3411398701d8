/**
 * The command lines of record, replay and trim as users get them wrong (audit10): a namespace given twice, a value
 * that starts with "-" (said in our words with the way to give it, as watch says it), each parsed in-process.
 */
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.ts';
import { parseRecordLine } from '../../src/cli/recordArgs.ts';
import { parseReplayLine } from '../../src/cli/replayArgs.ts';
import { parseTrimLine } from '../../src/cli/trimCommand.ts';

const record = (...argv: string[]) => parseRecordLine(['record', 'pods', '-o', 'r.jsonl', ...argv]);

describe('record -n', () => {
  it('takes one namespace; -n a -n b is refused as -n a,b is (it recorded only b), each quoted as typed', () => {
    expect(record('-n', 'shop')).toMatchObject({ namespace: 'shop' });
    expect('namespace' in (record() as object)).toBe(false);
    expect(record('-n', 'a,b')).toBe(
      '-n: "a,b" is not a namespace name (lower-case letters, digits and "-") (record takes one namespace, or none for all of them)',
    );
    // audit30: these were quoted as "a,b", which the user never typed
    const twice = '-n given 2 times ("a", "b"): record takes one namespace, or none for all of them';
    expect(record('-n', 'a', '-n', 'b')).toBe(twice);
    expect(record('--namespace=a', '-n', 'b')).toBe(twice);
    expect(record('-n', 'shop', '-n', 'shop')).toBe(
      '-n given 2 times ("shop", "shop"): record takes one namespace, or none for all of them',
    );
    expect(record('-n', 'Bad_NS')).toBe('-n: "Bad_NS" is not a namespace name (lower-case letters, digits and "-")');
  });
});

describe('a value that starts with "-": every command says how to give it (the one parseArgsError of args.ts)', () => {
  it('record, replay and trim explain it as watch does, not with parseArgs\' bare "argument is ambiguous"', () => {
    expect(record('--duration', '-5s')).toBe('record: --duration needs a value (to give one that starts with "-", write --duration=-5s)');
    expect(record('-n', '-x')).toBe('record: -n/--namespace needs a value (to give one that starts with "-", write -n=-x)');
    expect(parseReplayLine(['replay', 't.jsonl', '--from', '-1s'])).toBe(
      'replay: --from needs a value (to give one that starts with "-", write --from=-1s)',
    );
    expect(parseTrimLine(['trim', 't.jsonl', '--to', '-1s', '-o', 'w.jsonl'])).toBe(
      'trim: --to needs a value (to give one that starts with "-", write --to=-1s)',
    );
    expect(parseCommandLine(['watch', 'pods', '--metrics-port', '-1'])).toEqual({
      kind: 'usage',
      message: '--metrics-port needs a value (to give one that starts with "-", write --metrics-port=-1)',
    });
    // Given so, the value is read, and judged as a value.
    expect(record('--duration=-5s')).toBe('--duration: "-5s" is not a duration (a whole number with ms, s, m or h: 90s, 5m)');
  });

  it('a value missing, or given to a flag that takes none, is said in the same words by each', () => {
    expect(record('--duration')).toBe('record: --duration needs a value');
    expect(parseReplayLine(['replay', 't.jsonl', '--utc=yes'])).toBe('replay: --utc takes no value');
    expect(parseTrimLine(['trim', 't.jsonl', '-o'])).toBe('trim: -o/--output needs a value');
  });
});

describe('watch --all with resource names (audit35)', () => {
  it('is a usage error saying what --all does and how to watch those in all namespaces, in either order', () => {
    // It ran --all (every resource, Secrets included) and dropped `pods` unsaid; kubectl's `pods --all` is every pod.
    for (const argv of [
      ['watch', 'pods', '--all'],
      ['watch', '--all', 'pods'],
    ])
      expect(parseCommandLine(argv)).toEqual({
        kind: 'usage',
        message: expect.stringMatching(
          /^--all watches every resource .*\(Secrets included\) and takes no resource names; .*watch pods -A`/,
        ),
      });
    expect(parseCommandLine(['watch', '--all'])).toMatchObject({ kind: 'run', options: { all: true } });
    expect(parseCommandLine(['watch', 'pods', '-A'])).toMatchObject({ kind: 'run', options: { all: false, resources: ['pods'] } });
  });
});
