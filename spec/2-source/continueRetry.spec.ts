/**
 * A 429, or a 5xx with `Retry-After`, on a continue page: the same page is asked again after max(backoff,
 * Retry-After), the pages read kept, up to MAX_PAGE_RETRIES times, then the list is given up (relisted) as before
 * (audit23: it threw the pages away and listed again from page 1; client-go retries the request in place,
 * rest/with_retry.go). In virtual time, at the default options (backoff 800 ms with jitter: `random` 0 gives the
 * jitter's lower bound).
 */
import { NEVER, of, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { InformerError, errorFromStatus } from '../../src/0-model/errors.ts';
import { decoder } from '../../src/2-source/decode.ts';
import { KubeObject } from '../../src/0-model/objects.ts';
import { listAndWatch } from '../../src/2-source/listAndWatch.ts';
import { MAX_PAGE_RETRIES } from '../../src/2-source/recovery.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import { fakeListWatch, listPage } from '../../src/testing/index.ts';
import { obj, status } from './reflectorFixtures.ts';

const decode = decoder(KubeObject);
const throttled = (retryAfterSeconds?: number) =>
  new InformerError('TooManyRequests', 'slow down', { status: 429, phase: 'list', ...(retryAfterSeconds ? { retryAfterSeconds } : {}) });

function run(failures: readonly InformerError[], untilMs: number) {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  let result: { lw: ReturnType<typeof fakeListWatch>; events: SourceEvent<KubeObject>[] } | undefined;
  scheduler.run(({ flush }) => {
    const lw = fakeListWatch({
      lists: [
        of(listPage('10', [obj('a', '5')], 'c1')),
        ...failures.map((error) => throwError(() => error)),
        of(listPage('10', [obj('b', '6')])),
        of(listPage('12', [obj('a', '5'), obj('b', '6')])),
      ],
      watches: [NEVER, NEVER],
    });
    const events: SourceEvent<KubeObject>[] = [];
    const s = listAndWatch(lw, { decode, random: () => 0 }).subscribe((e) => events.push(e));
    scheduler.schedule(() => s.unsubscribe(), untilMs);
    flush();
    result = { lw, events };
  });
  return result!;
}

describe('a throttled continue page is asked again, the pages read kept (audit23)', () => {
  it('429 with Retry-After 5 s: the same token after 5 s (more than the 800 ms backoff), one replace with both pages', () => {
    const { lw, events } = run([throttled(5)], 60_000);
    expect(lw.lists.map((r) => [r.calledAt, r.options.continue ?? 'first'])).toEqual([
      [0, 'first'],
      [0, 'c1'],
      [5_000, 'c1'],
    ]);
    const replaces = events.filter((e) => e.type === 'replace');
    expect(replaces).toHaveLength(1);
    expect(replaces[0]).toMatchObject({ resourceVersion: '10', items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] });
    expect(events.filter((e) => e.type === 'error').map((e) => e.type === 'error' && e.error.reason)).toEqual(['TooManyRequests']);
  });

  it('503 with Retry-After 3 s, then 429 without: the same token each time, after 3 s, then the grown backoff (1.6 s)', () => {
    const unavailable = errorFromStatus(503, status(503, 'ServiceUnavailable'), 'list', 3);
    const { lw } = run([unavailable, throttled()], 60_000);
    expect(lw.lists.map((r) => [r.calledAt, r.options.continue ?? 'first'])).toEqual([
      [0, 'first'],
      [0, 'c1'],
      [3_000, 'c1'],
      [4_600, 'c1'],
    ]);
  });

  it('a 500 without Retry-After: the list is given up and asked again from page 1, as before', () => {
    const { lw } = run([errorFromStatus(500, status(500, 'InternalError'), 'list')], 60_000);
    expect(lw.lists.map((r) => [r.calledAt, r.options.continue ?? 'first'])).toEqual([
      [0, 'first'],
      [0, 'c1'],
      [800, 'first'],
    ]);
  });

  it(`after ${MAX_PAGE_RETRIES} retries in a row the list is given up: page 1 again`, () => {
    const failures = Array.from({ length: MAX_PAGE_RETRIES + 1 }, () => throttled(1));
    const { lw } = run(failures, 3_600_000);
    const asked = lw.lists.map((r) => r.options.continue ?? 'first');
    expect(asked.slice(0, MAX_PAGE_RETRIES + 2)).toEqual(['first', ...Array<string>(MAX_PAGE_RETRIES + 1).fill('c1')]);
    expect(asked[MAX_PAGE_RETRIES + 2]).toBe('first');
  });
});
