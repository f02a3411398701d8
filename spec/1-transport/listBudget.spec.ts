/**
 * The whole-list budget's collection before a relist (src/1-transport/http/listBudget.ts): only the first page of the
 * list that follows one dropped on the budget (or a large one left unfinished) waits for it, once; continue pages and
 * other lists never do.
 */
import { spawnSync } from 'node:child_process';
import { of, Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ListBudget } from '../../src/1-transport/http/listBudget.ts';
import type { BodyLimit } from '../../src/1-transport/http/body.ts';

const PAGE: BodyLimit = { maxBytes: 1000, what: 'list /api/v1/configmaps', option: 'maxListBytes' };

function budgetWithSpy() {
  const collections: Subject<void>[] = [];
  const budget = new ListBudget(1500, () => {
    const done = new Subject<void>();
    collections.push(done);
    return new Promise<void>((resolve) => done.subscribe({ complete: resolve }));
  });
  const opened: string[] = [];
  const open = (token: string | undefined): Observable<string> => {
    const request = token ?? 'first';
    return budget.whenRoom(token, () => {
      opened.push(request);
      return of(request);
    });
  };
  /** A chain of one 1,000-byte page, then a page that passes the budget (its limit's tooLarge called, as body.ts does). */
  const overrun = () => {
    budget.record('t1', budget.before(undefined), 1000);
    const limit = budget.limit(budget.before('t1'), PAGE);
    expect(limit.maxBytes).toBe(500);
    return limit.tooLarge!('501 bytes read');
  };
  return { budget, collections, opened, open, overrun };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('ListBudget.whenRoom: a collection before the list that follows one dropped on the budget', () => {
  it('no list dropped: every page opens at once, nothing collected', () => {
    const { collections, opened, open } = budgetWithSpy();
    open(undefined).subscribe();
    open('t1').subscribe();
    expect(opened).toEqual(['first', 't1']);
    expect(collections).toHaveLength(0);
  });

  it('after a drop: the next first page opens only once the collection is done, and only that one waits', async () => {
    const { collections, opened, open, overrun } = budgetWithSpy();
    expect(overrun().reason).toBe('ListTooLong');
    open(undefined).subscribe();
    expect(collections).toHaveLength(1);
    expect(opened).toEqual([]);
    collections[0]!.complete();
    await settle();
    expect(opened).toEqual(['first']);
    // The list after it, and its continue pages, open at once.
    open('t9').subscribe();
    open(undefined).subscribe();
    expect(opened).toEqual(['first', 't9', 'first']);
    expect(collections).toHaveLength(1);
  });

  it('a continue page after a drop does not wait (it is not a new list) and leaves the wait to the next first page', () => {
    const { collections, opened, open, overrun } = budgetWithSpy();
    overrun();
    open('t2').subscribe();
    expect(opened).toEqual(['t2']);
    open(undefined).subscribe();
    expect(collections).toHaveLength(1);
  });

  it('unsubscribed while it waits: the request is never opened', async () => {
    const { collections, opened, open, overrun } = budgetWithSpy();
    overrun();
    open(undefined).subscribe().unsubscribe();
    collections[0]!.complete();
    await settle();
    expect(opened).toEqual([]);
  });
});

describe('ListBudget.whenRoom: a collection before the list that follows a large list left unfinished', () => {
  // The reflector drops a list on maxListObjects or maxListPages, a continue token expires, a page fails: the chain is
  // never continued, and what it read is garbage the heap keeps until a full collection (budget 1,500: a quarter is 375).
  it('a chain of a quarter of the budget or more, never continued: the next first page waits for one collection', async () => {
    const { budget, collections, opened, open } = budgetWithSpy();
    budget.record('t1', budget.before(undefined), 400);
    open(undefined).subscribe();
    expect(collections).toHaveLength(1);
    expect(opened).toEqual([]);
    collections[0]!.complete();
    await settle();
    expect(opened).toEqual(['first']);
    // Collected for once: the lists after it open at once.
    open(undefined).subscribe();
    expect(opened).toEqual(['first', 'first']);
    expect(collections).toHaveLength(1);
  });

  it('a smaller unfinished chain: nothing collected', () => {
    const { budget, collections, opened, open } = budgetWithSpy();
    budget.record('t1', budget.before(undefined), 374);
    open(undefined).subscribe();
    expect(opened).toEqual(['first']);
    expect(collections).toHaveLength(0);
  });

  it('a list still going on beside the new one keeps its count, and is not collected for again as it grows', () => {
    const { budget, collections, open } = budgetWithSpy();
    budget.record('t1', budget.before(undefined), 1000);
    open(undefined).subscribe();
    expect(collections).toHaveLength(1);
    // The first list goes on: its budget counts every page before and after.
    budget.record('t2', budget.before('t1'), 100);
    const sofar = budget.before('t2');
    expect(sofar).toMatchObject({ pages: 2, bytes: 1100 });
    budget.record('t3', sofar, 100);
    expect(budget.limit(budget.before('t3'), PAGE).maxBytes).toBe(300);
    open(undefined).subscribe();
    expect(collections).toHaveLength(1);
  });
});

describe('collectGarbage', () => {
  it('prints no ExperimentalWarning for vm.measureMemory, lets other warnings through, and restores process.emitWarning', () => {
    // In a process of its own: Node warns once per process, so an earlier call in this worker would hide a regression.
    const script = [
      "const { collectGarbage } = await import('./src/1-transport/http/listBudget.ts');",
      'const before = process.emitWarning;',
      'await collectGarbage();',
      "if (process.emitWarning !== before) throw new Error('emitWarning not restored');",
      "process.emitWarning('still shown', 'ExperimentalWarning');",
    ].join('\n');
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: process.cwd() });
    expect(result.status).toBe(0);
    expect(result.stderr).not.toMatch(/measureMemory/);
    expect(result.stderr).toMatch(/ExperimentalWarning: still shown/);
  });
});
