import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  InformerError,
  REASON_CLASSES,
  isFailure,
  isNotice,
  isObjectFault,
  isPermanent,
  isResumable,
  type ErrorReason,
} from '../../src/0-model/errors.ts';
import { isFailure as healthIsFailure } from '../../src/5-informer/health.ts';

const root = new URL('../../', import.meta.url).pathname;

// Compile-time: the table's keys are exactly the reasons (a reason without a row, or a row for no reason, fails tsc).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const exhaustive: Same<keyof typeof REASON_CLASSES, ErrorReason> = true;

/** The members of the `ErrorReason` union as written in errors.ts. */
function declaredReasons(): string[] {
  const source = readFileSync(join(root, 'src/0-model/errors.ts'), 'utf8');
  const union = /export type ErrorReason =([^;]+);/.exec(source)![1]!;
  return [...union.matchAll(/'(\w+)'/g)].map((m) => m[1]!);
}

describe('one failure classification (errors.ts REASON_CLASSES)', () => {
  it('classifies every ErrorReason, and nothing else', () => {
    expect(exhaustive).toBe(true);
    expect(Object.keys(REASON_CLASSES).sort()).toEqual(declaredReasons().sort());
  });

  it.each(Object.keys(REASON_CLASSES) as ErrorReason[])('%s: every predicate reads the one row', (reason) => {
    const row = REASON_CLASSES[reason];
    const error = new InformerError(reason, 'x', { phase: 'watch' });
    expect(isFailure(error)).toBe(row.kind === 'failure');
    expect(healthIsFailure(error)).toBe(row.kind === 'failure');
    expect(isObjectFault(error)).toBe(row.kind !== 'failure');
    expect(isNotice(error)).toBe(row.kind === 'notice');
    expect(isResumable(error)).toBe(row.kind === 'failure' && 'resumable' in row);
    expect(isPermanent(error)).toBe(row.kind === 'failure' && 'permanent' in row);
  });

  it('keeps the classes the three former lists had', () => {
    const where = (test: (e: InformerError) => boolean) =>
      (Object.keys(REASON_CLASSES) as ErrorReason[]).filter((r) => test(new InformerError(r, 'x'))).sort();
    // health.ts NOT_A_FAILURE and errors.ts objectFaults ∪ notices (they agreed).
    expect(where((e) => !isFailure(e))).toEqual(
      ['HandlerError', 'IndexerError', 'NotAcceptable', 'TransformError', 'UnknownEventType', 'ValidationFailed'].sort(),
    );
    expect(where(isNotice)).toEqual(['NotAcceptable']);
    expect(where(isResumable)).toEqual(['NetworkError', 'ProtocolError', 'ServerError', 'Timeout', 'Unknown', 'WatchError']);
    // cli/watch.ts PERMANENT.
    expect(where(isPermanent)).toEqual(['BadRequest', 'Forbidden', 'NotFound']);
  });

  it('has no second list of reasons in src/ (a set or array of ErrorReason outside errors.ts)', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
        d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
      );
    const copies = files(join(root, 'src'))
      .filter((f) => !f.endsWith('0-model/errors.ts'))
      .filter((f) => /new Set<ErrorReason>\(\[|ErrorReason\[\]\s*=\s*\[/.test(readFileSync(f, 'utf8')));
    expect(copies).toEqual([]);
  });
});
