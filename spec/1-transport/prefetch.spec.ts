/**
 * The one-slot page prefetch (src/1-transport/http/prefetch.ts), its rules one by one on a request made of an
 * Observable whose teardown says it was aborted: what is claimed, what is aborted and when (synchronously, or at the
 * end of the job for a page that completed), and a failure held for the claimer. The same rules over HTTP against the
 * emulator: spec/1-transport/prefetchHttp.spec.ts.
 */
import { Observable, type Subscriber } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { PagePrefetch } from '../../src/1-transport/http/prefetch.ts';
import type { Opened } from '../../src/1-transport/http/request.ts';
import type { HttpResponse } from '../../src/1-transport/http2/response.ts';

/** A request that answers when told to, and counts its aborts (unsubscribed: what the transport's request does then). */
function request() {
  const closed: (() => void)[] = [];
  const response = { statusCode: 200, complete: false, on: (_: 'close', listener: () => void) => closed.push(listener) };
  const opened: Opened = { response: response as unknown as HttpResponse };
  let subscriber: Subscriber<Opened> | undefined;
  const state = {
    subscribed: 0,
    aborted: 0,
    opened,
    observable: new Observable<Opened>((s) => {
      state.subscribed++;
      subscriber = s;
      return () => void state.aborted++;
    }),
    answer: () => subscriber!.next(opened),
    fail: (error: unknown) => subscriber!.error(error),
    /** The connection is cut after the headers, before the body is read. */
    cut: () => closed.forEach((listener) => listener()),
  };
  return state;
}

const endOfJob = () => Promise.resolve();

describe('PagePrefetch', () => {
  it('a list of the same request takes the request held: its response, whether it came before or after the claim', () => {
    const prefetch = new PagePrefetch();
    const page = {};
    const early = request();
    prefetch.open(page, '/q?continue=a', early.observable, undefined);
    expect(early.subscribed).toBe(1); // opened at once
    early.answer();
    const seen: Opened[] = [];
    prefetch.claim('/q?continue=a')!.opened.subscribe((o) => seen.push(o));
    expect(seen).toEqual([early.opened]);
    expect(early.aborted).toBe(0);

    const late = request();
    prefetch.open(page, '/q?continue=b', late.observable, undefined);
    const claimed = prefetch.claim('/q?continue=b')!;
    claimed.opened.subscribe((o) => seen.push(o));
    expect(seen).toHaveLength(1);
    late.answer();
    expect(seen).toEqual([early.opened, late.opened]);
    // Taken once: a second list of the same request opens its own.
    expect(prefetch.claim('/q?continue=b')).toBeUndefined();
  });

  it('a list of another request aborts the one held at once, and opens its own', () => {
    const prefetch = new PagePrefetch();
    const held = request();
    prefetch.open({}, '/q?limit=500&continue=a', held.observable, undefined);
    expect(prefetch.claim('/q?limit=250&continue=a')).toBeUndefined();
    expect(held.aborted).toBe(1);
  });

  it('abort (a watch is asked) aborts the one held', () => {
    const prefetch = new PagePrefetch();
    const held = request();
    prefetch.open({}, '/q?continue=a', held.observable, undefined);
    prefetch.abort();
    expect(held.aborted).toBe(1);
    expect(prefetch.claim('/q?continue=a')).toBeUndefined();
  });

  it('the page that opened it failed or was unsubscribed before it completed: aborted at once', () => {
    const prefetch = new PagePrefetch();
    const page = {};
    const held = request();
    prefetch.open(page, '/q?continue=a', held.observable, undefined);
    prefetch.release({}, false); // another page's end: nothing
    expect(held.aborted).toBe(0);
    prefetch.release(page, false);
    expect(held.aborted).toBe(1);
  });

  it('the page completed: kept until the end of the job, so that the next page asked from its completion takes it', async () => {
    const prefetch = new PagePrefetch();
    const page = {};
    const claimedInTime = request();
    prefetch.open(page, '/q?continue=a', claimedInTime.observable, undefined);
    prefetch.release(page, true); // the reflector unsubscribes the page, then asks the next one
    const claimed = prefetch.claim('/q?continue=a');
    expect(claimed).toBeDefined();
    claimed!.opened.subscribe();
    await endOfJob();
    expect(claimedInTime.aborted).toBe(0);

    const unclaimed = request();
    prefetch.open(page, '/q?continue=b', unclaimed.observable, undefined);
    prefetch.release(page, true);
    expect(unclaimed.aborted).toBe(0);
    await endOfJob();
    expect(unclaimed.aborted).toBe(1); // nobody asked for it: no timer, no request left behind
    expect(prefetch.claim('/q?continue=b')).toBeUndefined();
  });

  it('unsubscribing the page that took it aborts the request', () => {
    const prefetch = new PagePrefetch();
    const held = request();
    prefetch.open({}, '/q?continue=a', held.observable, undefined);
    const subscription = prefetch.claim('/q?continue=a')!.opened.subscribe();
    expect(held.aborted).toBe(0);
    subscription.unsubscribe();
    expect(held.aborted).toBe(1);
  });

  it("a failure of the request held is the claimer's, whether it came before or after the claim; never retried", () => {
    const prefetch = new PagePrefetch();
    const failures: unknown[] = [];
    for (const before of [true, false]) {
      const error = new Error(before ? 'before' : 'after');
      const held = request();
      prefetch.open({}, '/q?continue=a', held.observable, undefined);
      if (before) held.fail(error);
      prefetch.claim('/q?continue=a')!.opened.subscribe({ error: (e: unknown) => failures.push(e) });
      if (!before) held.fail(error);
      expect(held.subscribed).toBe(1);
    }
    expect(failures.map((e) => (e as Error).message)).toEqual(['before', 'after']);
  });

  it("a response cut before it was claimed is the claimer's failure (its close would otherwise have gone unheard)", () => {
    const prefetch = new PagePrefetch();
    const held = request();
    prefetch.open({}, '/q?continue=a', held.observable, undefined);
    held.answer();
    held.cut();
    const failures: unknown[] = [];
    prefetch.claim('/q?continue=a')!.opened.subscribe({ next: () => failures.push('a response'), error: (e: unknown) => failures.push(e) });
    expect(failures).toMatchObject([{ reason: 'NetworkError', phase: 'list' }]);
  });

  it('one slot: a request opened ahead aborts the one held before it', () => {
    const prefetch = new PagePrefetch();
    const first = request();
    const second = request();
    prefetch.open({}, '/q?continue=a', first.observable, undefined);
    prefetch.open({}, '/q?continue=b', second.observable, undefined);
    expect([first.aborted, second.aborted]).toEqual([1, 0]);
  });
});
