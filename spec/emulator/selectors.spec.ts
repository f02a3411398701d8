import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../../packages/emulator/src/selectors.ts';
import { ApiError } from 'rx-informer-emulator';

const errorOf = (input: string): string => {
  try {
    parseLabelSelector(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe(400);
    return (e as ApiError).message;
  }
  throw new Error(`no error for ${JSON.stringify(input)}`);
};

describe('label selectors', () => {
  it('parses every operator', () => {
    expect(parseLabelSelector('a=1, b==2,c!=3,d in (x, y),e notin (z),f,!g,h>5,i<7')).toEqual([
      { key: 'a', op: '=', values: ['1'] },
      { key: 'b', op: '==', values: ['2'] },
      { key: 'c', op: '!=', values: ['3'] },
      { key: 'd', op: 'in', values: ['x', 'y'] },
      { key: 'e', op: 'notin', values: ['z'] },
      { key: 'f', op: 'exists', values: [] },
      { key: 'g', op: '!', values: [] },
      { key: 'h', op: 'gt', values: ['5'] },
      { key: 'i', op: 'lt', values: ['7'] },
    ]);
    expect(parseLabelSelector('')).toEqual([]);
    expect(parseLabelSelector('example.com/app=in')).toEqual([{ key: 'example.com/app', op: '=', values: ['in'] }]);
    expect(parseLabelSelector('a=')).toEqual([{ key: 'a', op: '=', values: [''] }]);
  });

  it('rejects malformed selectors with the apimachinery messages', () => {
    expect(errorOf('app in (a')).toBe("unable to parse requirement: found '', expected: ',' or ')'");
    expect(errorOf('a=b,')).toBe("found '', expected: identifier after ','");
    expect(errorOf('a b')).toBe("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    expect(errorOf('a=b c')).toBe("found 'c', expected: ',' or 'end of string'");
    expect(errorOf('=a')).toBe("found '=', expected: !, identifier, or 'end of string'");
    expect(errorOf('a in b')).toBe("unable to parse requirement: found 'b' expected: '('");
    expect(errorOf('a>b')).toMatch(/integer/);
    expect(errorOf('-a=b')).toMatch(/^unable to parse requirement: key: Invalid value: "-a"/);
    expect(errorOf('a=-b')).toMatch(/Invalid value: "-b"/);
  });

  it('matches like apimachinery (checked against a reference model)', () => {
    const key = fc.constantFrom('a', 'b', 'c');
    const value = fc.constantFrom('x', 'y', 'z', '1', '9');
    const labelsArb = fc.dictionary(key, value, { maxKeys: 3 });
    const reqArb = fc.oneof(
      fc
        .tuple(key, fc.constantFrom('=', '==', '!='), value)
        .map(([k, op, v]) => ({ text: `${k}${op}${v}`, test: (l: Record<string, string>) => (op === '!=' ? l[k] !== v : l[k] === v) })),
      fc
        .tuple(key, fc.constantFrom('in', 'notin'), fc.uniqueArray(value, { minLength: 1, maxLength: 3 }))
        .map(([k, op, vs]: [string, string, string[]]) => ({
          text: `${k} ${op} (${vs.join(',')})`,
          test: (l: Record<string, string>) => (op === 'in' ? k in l && vs.includes(l[k]!) : !(k in l) || !vs.includes(l[k]!)),
        })),
      key.map((k) => ({ text: k, test: (l: Record<string, string>) => k in l })),
      key.map((k) => ({ text: `!${k}`, test: (l: Record<string, string>) => !(k in l) })),
      fc.tuple(key, fc.constantFrom('>', '<'), fc.integer({ min: 0, max: 9 })).map(([k, op, n]) => ({
        text: `${k}${op}${n}`,
        test: (l: Record<string, string>) => k in l && /^\d+$/.test(l[k]!) && (op === '>' ? Number(l[k]) > n : Number(l[k]) < n),
      })),
    );
    fc.assert(
      fc.property(labelsArb, fc.array(reqArb, { minLength: 1, maxLength: 4 }), (labels, reqs) => {
        const sel = parseLabelSelector(reqs.map((r) => r.text).join(','));
        expect(matchesLabels(sel, labels)).toBe(reqs.every((r) => r.test(labels)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('field selectors', () => {
  it('parses =, ==, != with escapes and matches missing fields as empty', () => {
    const sel = parseFieldSelector('metadata.name==a\\,b,spec.nodeName=,status.phase!=Running');
    expect(sel).toEqual([
      { field: 'metadata.name', op: '=', value: 'a,b' },
      { field: 'spec.nodeName', op: '=', value: '' },
      { field: 'status.phase', op: '!=', value: 'Running' },
    ]);
    expect(matchesFields(sel, { 'metadata.name': 'a,b', 'status.phase': 'Pending' })).toBe(true);
    expect(matchesFields(sel, { 'metadata.name': 'a,b', 'spec.nodeName': 'n1' })).toBe(false);
    expect(() => parseFieldSelector('metadata.name')).toThrow(/can't understand 'metadata.name'/);
  });
});
