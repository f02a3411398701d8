/**
 * Which reason an ERROR event in a watch gets, and where `WatchError` comes from (the `ErrorReason` JSDoc in
 * src/0-model/errors.ts): an ERROR event's Status is read as an HTTP error is, through `reasonForStatus` (as
 * client-go's `apierrors.FromObject`), never as `WatchError`; `WatchError` is a streaming list that the server
 * ended before its initial-events-end bookmark. At the default options, in virtual time.
 */
import { describe, expect, it } from 'vitest';
import { KubeObject } from '../../src/index.ts';
import { decoder, listAndWatch, type ListAndWatchOptions, type SourceEvent, type WatchFrame } from '../../src/pipeline.ts';
import { fakeListWatch, listPage, watchBookmark, watchEvent, watchStatus, type FakeListWatch } from '../support/fakeListWatch.ts';
import { testScheduler } from '../support/testScheduler.ts';

/** The errors listAndWatch reports over `fake` until `untilMs`, as `time reason status`. */
function errorsOver(
  makeFake: (cold: ReturnType<typeof testScheduler>['createColdObservable']) => FakeListWatch,
  options: Partial<ListAndWatchOptions<KubeObject>> = {},
  untilMs = 100,
): { errors: string[]; requests: string[] } {
  const ts = testScheduler();
  const errors: string[] = [];
  let requests: string[] = [];
  ts.run(({ cold, flush }) => {
    const fake = makeFake(cold);
    const source = listAndWatch<KubeObject>(fake, { decode: decoder(KubeObject), scheduler: ts, random: () => 0, ...options });
    const subscription = source.subscribe((event: SourceEvent<KubeObject>) => {
      if (event.type === 'error') errors.push(`${ts.now()} ${event.error.reason} ${String(event.error.status)}`);
    });
    ts.schedule(() => subscription.unsubscribe(), untilMs);
    flush();
    requests = fake.requests.map((r) => `${r.calledAt} ${r.kind}`);
  });
  return { errors, requests };
}

/** A list, then a watch that brings a bookmark and then an ERROR event with `status`. */
const erroring = (status: Record<string, unknown>) => (cold: ReturnType<typeof testScheduler>['createColdObservable']) =>
  fakeListWatch({
    lists: [cold('-(p|)', { p: listPage('10', []) })],
    watches: [cold<WatchFrame>('-b-e', { b: watchBookmark('25'), e: watchEvent('ERROR', status) })],
  });

const status = (code: number | undefined, reason: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message: `status ${code}`,
});

describe('an ERROR event in a watch: its Status read as an HTTP error is, never WatchError', () => {
  it.each([
    { code: 500, reason: 'InternalError', expected: 'ServerError 500' },
    { code: 503, reason: 'ServiceUnavailable', expected: 'ServerError 503' },
    { code: 403, reason: 'Forbidden', expected: 'Forbidden 403' },
    { code: 404, reason: 'NotFound', expected: 'NotFound 404' },
    { code: 429, reason: 'TooManyRequests', expected: 'TooManyRequests 429' },
    { code: 504, reason: 'Timeout', expected: 'Timeout 504' },
    { code: 499, reason: 'Whatever', expected: 'Unknown 499' },
    { code: 410, reason: 'Expired', expected: 'Expired 410' },
    { code: 410, reason: 'Gone', expected: 'Gone 410' },
    { code: undefined, reason: 'InternalError', expected: 'ServerError 500' },
  ])('code $code ($reason): $expected', ({ code, reason, expected }) => {
    const { errors } = errorsOver(erroring(status(code, reason)));
    expect(errors[0]).toBe(`4 ${expected}`);
    expect(errors.filter((e) => e.includes('WatchError'))).toEqual([]);
  });

  it("the testing kit's watchStatus(500) too", () => {
    const { errors } = errorsOver((cold) =>
      fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('-b-e', { b: watchBookmark('25'), e: watchStatus(500) })],
      }),
    );
    expect(errors[0]).toBe('4 ServerError 500');
  });
});

describe('WatchError: a streaming list the server ended before its initial-events-end bookmark', () => {
  it('is reported, then a plain list follows after the default backoff (800 ms)', () => {
    const { errors, requests } = errorsOver(
      (cold) =>
        fakeListWatch({
          watches: [
            cold<WatchFrame>('-a-|', {
              a: watchEvent('ADDED', { apiVersion: 'v1', kind: 'Widget', metadata: { name: 'a', resourceVersion: '11' } }),
            }),
          ],
          lists: [cold('-(p|)', { p: listPage('20', []) })],
        }),
      { watchList: true },
      2_000,
    );
    expect(errors).toEqual(['3 WatchError undefined']);
    expect(requests).toEqual(['0 watch', '803 list', '804 watch']);
  });
});
