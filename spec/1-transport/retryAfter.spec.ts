/**
 * `Retry-After` is capped at MAX_RETRY_AFTER_SECONDS (issue #13): 2592000 s
 * overflowed Node's timers, which then fired after 1 ms, a busy loop of lists.
 */
import { firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, InformerError, informer } from '../../src/index.ts';
import { MAX_RETRY_AFTER_SECONDS, httpListWatch, parseRetryAfter } from '../../src/1-transport/httpTransport.ts';
import { MAX_RETRY_AFTER_CHARS } from '../../src/0-model/retryAfter.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { waitFor } from '../resilience/harness/live.ts';
import { InflightProbe } from '../resilience/harness/probes.ts';
import { HarnessClock } from '../resilience/harness/clock.ts';

const now = Date.parse('2025-01-01T00:00:00Z');

describe('parseRetryAfter caps the wait', () => {
  it('at 300 s (5 minutes)', () => {
    expect(MAX_RETRY_AFTER_SECONDS).toBe(300);
  });

  it('for delta-seconds', () => {
    expect(parseRetryAfter('300', now)).toBe(300);
    expect(parseRetryAfter('301', now)).toBe(300);
    expect(parseRetryAfter('2592000', now)).toBe(300);
    expect(parseRetryAfter('9'.repeat(40), now)).toBe(300);
    expect(parseRetryAfter('1e300', now)).toBeUndefined(); // not whole digits: unread, as client-go's strconv.Atoi
  });

  it('for an HTTP date far ahead', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:05:00 GMT', now)).toBe(300);
    expect(parseRetryAfter('Fri, 31 Jan 2025 00:00:00 GMT', now)).toBe(300);
    expect(parseRetryAfter('Fri, 01 Jan 2100 00:00:00 GMT', now)).toBe(300);
  });
});

// A value longer than MAX_RETRY_AFTER_CHARS is not read (a hostile header costs no regex or Date.parse time on it). Each
// value below would parse without the cap (whitespace is legal around delta-seconds and ignored around a date), so a
// parser that dropped the length check answers 5 where these expect undefined; no timing is measured.
describe('parseRetryAfter ignores an overlong value', () => {
  const date = 'Wed, 01 Jan 2025 00:00:05 GMT'; // 5 s after `now`
  const pad = (n: number) => ' '.repeat(n);

  it('is 64 characters', () => {
    expect(MAX_RETRY_AFTER_CHARS).toBe(64);
  });

  it('delta-seconds padded to the cap is read; one character more is not', () => {
    expect(parseRetryAfter(`${pad(MAX_RETRY_AFTER_CHARS - 1)}5`, now)).toBe(5);
    expect(parseRetryAfter(`5${pad(MAX_RETRY_AFTER_CHARS - 1)}`, now)).toBe(5);
    expect(parseRetryAfter(`${pad(MAX_RETRY_AFTER_CHARS)}5`, now)).toBeUndefined();
    expect(parseRetryAfter(`5${pad(MAX_RETRY_AFTER_CHARS)}`, now)).toBeUndefined();
    expect(parseRetryAfter(`0${'0'.repeat(MAX_RETRY_AFTER_CHARS)}5`, now)).toBeUndefined(); // leading zeros: digits all
  });

  it('an HTTP date padded to the cap is read; one character more is not', () => {
    expect(parseRetryAfter(`${date}${pad(MAX_RETRY_AFTER_CHARS - date.length)}`, now)).toBe(5);
    expect(parseRetryAfter(`${pad(MAX_RETRY_AFTER_CHARS - date.length)}${date}`, now)).toBe(5);
    expect(parseRetryAfter(`${date}${pad(MAX_RETRY_AFTER_CHARS - date.length + 1)}`, now)).toBeUndefined();
    expect(parseRetryAfter(`${pad(MAX_RETRY_AFTER_CHARS - date.length + 1)}${date}`, now)).toBeUndefined();
  });

  it('a 16 KiB value that would otherwise be a date or seconds, alone or first of several, is undefined', () => {
    expect(parseRetryAfter(`${date}${pad(16 * 1024)}`, now)).toBeUndefined();
    expect(parseRetryAfter(`${pad(16 * 1024)}5`, now)).toBeUndefined();
    expect(parseRetryAfter([`${pad(16 * 1024)}5`, '7'], now)).toBeUndefined();
    expect(parseRetryAfter([`${pad(MAX_RETRY_AFTER_CHARS - 1)}5`, '7'], now)).toBe(5);
  });
});

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

describe('a 429 or 503 asking for a month', () => {
  it.each([429, 503])('%i: the error carries 300 s', async (code) => {
    api = await startApiServer();
    api.faults.add({ match: { watch: false }, times: 1, fault: { type: 'status', code, retryAfterSeconds: 2_592_000 } });
    const error = await firstValueFrom(httpListWatch(api.kubeConfig, { resource: ConfigMap }).list({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InformerError);
    expect((error as InformerError).retryAfterSeconds).toBe(300);
  });

  it('an informer waits the capped 300 s (on its clock) instead of relisting in a loop', async () => {
    api = await startApiServer();
    api.faults.add({ match: { watch: false }, fault: { type: 'status', code: 429, retryAfterSeconds: 2_592_000 } });
    // Real time plus jumps: the wait is checked to the millisecond, whatever the machine's speed; the probe sees
    // each request the moment the informer starts it.
    const clock = new HarnessClock();
    const probe = new InflightProbe(() => clock.now());
    const cache = informer(probe.wrap(httpListWatch(api.kubeConfig, { resource: ConfigMap })), ConfigMap, {
      backoff: { initialMs: 1, maxMs: 1 },
      scheduler: clock,
    });
    const errors: InformerError[] = [];
    let synced = false;
    // The wait starts when the informer reads the 429: after this reading, and before the poll below sees the error
    // (the informer reports it and starts the wait in one synchronous step).
    const startedAt = clock.now();
    subscriptions.push(
      cache.errors$.subscribe((e) => errors.push(e)),
      cache.synced$.subscribe((s) => (synced = s)),
    );
    await waitFor('the 429', () => errors.length === 1);
    const seenAt = clock.now();
    // Before the cap: the wait was armed for a month, and Node's timer overflowed and fired after 1 ms: a list every
    // millisecond (513 in 1 s). Now the first thing the informer waits for falls due 300 s after the 429 on its
    // clock (a real timer of 300 s): nothing can happen before, however long a slow machine takes to get here.
    expect(probe.requests).toHaveLength(1);
    const [next] = clock.armed();
    expect(next).toBeGreaterThanOrEqual(startedAt + 300_000);
    expect(next).toBeLessThanOrEqual(seenAt + 300_000);
    expect(errors.map((e) => `${e.reason} ${e.retryAfterSeconds}`)).toEqual(['TooManyRequests 300']);
    // Short of 300 s on the informer's clock: still waiting.
    clock.advance(startedAt + 300_000 - 5 - clock.now());
    expect(probe.requests).toHaveLength(1);
    // Past 300 s: the next list starts at once (the fault was for one request), and the informer syncs.
    clock.advance(seenAt + 300_000 + 5 - clock.now());
    expect(probe.requests).toHaveLength(2);
    await waitFor('the list after 300 s', () => synced);
  });
});
