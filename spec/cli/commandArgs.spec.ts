/**
 * The command lines of record, replay and trim as users get them wrong (audit10): a namespace given twice, a value
 * that starts with "-" (said in our words with the way to give it, as watch says it), each parsed in-process.
 */
import { describe, expect, it } from 'vitest';
import { parseRecordLine } from '../../src/cli/recordArgs.ts';

const record = (...argv: string[]) => parseRecordLine(['record', 'pods', '-o', 'r.jsonl', ...argv]);

describe('record -n', () => {
  it('takes one namespace; -n a -n b is refused as -n a,b is (it recorded only b)', () => {
    expect(record('-n', 'shop')).toMatchObject({ namespace: 'shop' });
    expect('namespace' in (record() as object)).toBe(false);
    const refused =
      '-n: "a,b" is not a namespace name (lower-case letters, digits and "-") (record takes one namespace, or none for all of them)';
    expect(record('-n', 'a,b')).toBe(refused);
    expect(record('-n', 'a', '-n', 'b')).toBe(refused);
    expect(record('--namespace=a', '-n', 'b')).toBe(refused);
    expect(record('-n', 'Bad_NS')).toBe('-n: "Bad_NS" is not a namespace name (lower-case letters, digits and "-")');
  });
});
