/**
 * One bad number (NaN, e.g. `Number(process.env.X)` with X unset, or a negative one), one answer (audit23): the entry
 * points refuse it with a `TypeError` naming the option, a direct caller's `listAndWatch` and `Backoff` too (left71:
 * rx-informer/pipeline's); the inner helpers (`reflectorConfig`, the transport's), for a caller that slips past them, fall
 * back to the default, never to "no bound" (`requestTimeoutMs: NaN` was no request timeout at all; `stallMarginMs: NaN`
 * a watch deadline re-armed every millisecond).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ConfigMap, informer, informerFactory, shardedInformer, type InformerOptions } from '../../src/index.ts';
import { byteLimit } from '../../src/1-transport/http/options.ts';
import { timerMs } from '../../src/util/scheduleAfter.ts';
import { listAndWatch, reflectorConfig } from '../../src/2-source/listAndWatch.ts';
import type { ListWatch } from '../../src/1-transport/listWatch.ts';
import { Backoff } from '../../src/2-source/backoff.ts';
import { EMPTY, NEVER } from 'rxjs';

function offlineKc(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }, { name: 'u' });
  return kc;
}
const loose = (options: Record<string, unknown>) => options as unknown as InformerOptions<ConfigMap>;
const shards = { shards: 1, shardOf: () => 0, held$: NEVER, owns: () => true, gate: () => EMPTY };
/** listAndWatch (rx-informer/pipeline) checks at the call: the ListWatch is never reached. */
const unused = {} as ListWatch;
const decode = (() => undefined) as never;
/** A direct caller's entries, where the option is theirs: `listAndWatch` (the reflector's and `backoff`), `new Backoff`. */
function directCalls(options: Record<string, unknown>): (() => unknown)[] {
  if ('http' in options) return [];
  const calls: (() => unknown)[] = [() => listAndWatch(unused, { decode, ...options })];
  if ('backoff' in options) calls.push(() => new Backoff(options.backoff as never));
  return calls;
}

const BAD: readonly [Record<string, unknown>, string][] = [
  [{ stallMarginMs: NaN }, 'stallMarginMs'],
  [{ idleTimeoutMs: -1 }, 'idleTimeoutMs'],
  [{ minWatchTimeoutSeconds: NaN }, 'minWatchTimeoutSeconds'],
  [{ pageSize: '500' }, 'pageSize'],
  [{ maxNamespaceWatches: NaN }, 'maxNamespaceWatches'],
  [{ backoff: { initialMs: NaN } }, 'backoff.initialMs'],
  [{ http: { requestTimeoutMs: NaN } }, 'http.requestTimeoutMs'],
  [{ http: { requestTimeoutMs: -1 } }, 'http.requestTimeoutMs'],
  [{ http: { maxListBytes: NaN } }, 'http.maxListBytes'],
  [{ http: { http2: { pingTimeoutMs: NaN } } }, 'http.http2.pingTimeoutMs'],
];

describe('a numeric option is a number ≥ 0 or Infinity, else a TypeError naming it (audit23)', () => {
  for (const [options, name] of BAD)
    it(`${JSON.stringify(options, (_, v: unknown) => (typeof v === 'number' && Number.isNaN(v) ? 'NaN' : v))} → ${name}`, () => {
      const message = new RegExp(
        `\`${name.replaceAll('.', '\\.')}\` must be a number (≥ 0 or Infinity|> 0 \\(finite\\)|> 0 or Infinity), got `,
      );
      expect(() => informer(offlineKc(), ConfigMap, loose(options))).toThrow(TypeError);
      expect(() => informer(offlineKc(), ConfigMap, loose(options))).toThrow(message);
      expect(() => informerFactory(offlineKc(), options as never)).toThrow(message);
      expect(() => informerFactory(offlineKc()).informer(ConfigMap, loose(options))).toThrow(message);
      expect(() => shardedInformer(offlineKc(), ConfigMap, shards, loose(options))).toThrow(message);
      for (const call of directCalls(options)) expect(call).toThrow(message);
    });

  // left62: where 0 is no bound to turn off but a fault (docs/api.md), it is refused as NaN is.
  const ZERO: readonly [Record<string, unknown>, RegExp][] = [
    [{ minWatchTimeoutSeconds: 0 }, /`minWatchTimeoutSeconds` must be a number > 0 \(finite\), got a number \(0\)/],
    [{ minWatchTimeoutSeconds: Infinity }, /`minWatchTimeoutSeconds` must be a number > 0 \(finite\), got a number \(Infinity\)/],
    [{ backoff: { initialMs: 0 } }, /`backoff\.initialMs` must be a number > 0 \(finite\), got a number \(0\)/],
    [{ backoff: { initialMs: Infinity } }, /`backoff\.initialMs` must be a number > 0 \(finite\), got a number \(Infinity\)/],
    [{ backoff: { maxMs: 0 } }, /`backoff\.maxMs` must be a number > 0 or Infinity, got a number \(0\)/],
  ];
  for (const [options, message] of ZERO)
    it(`${JSON.stringify(options, (_, v: unknown) => (v === Infinity ? 'Infinity' : v))}: refused (left62)`, () => {
      expect(() => informer(offlineKc(), ConfigMap, loose(options))).toThrow(message);
      expect(() => informerFactory(offlineKc()).informer(ConfigMap, loose(options))).toThrow(message);
      expect(() => shardedInformer(offlineKc(), ConfigMap, shards, loose(options))).toThrow(message);
      // left71: a direct caller of listAndWatch or Backoff (rx-informer/pipeline) got the default in silence.
      expect(directCalls(options)).not.toHaveLength(0);
      for (const call of directCalls(options)) expect(call).toThrow(message);
    });

  it('0 and Infinity (off where documented) and ordinary values are taken', () => {
    const good = loose({
      stallMarginMs: 0,
      idleTimeoutMs: Infinity,
      bookmarkTimeoutMs: 0,
      busyIdleTimeoutMs: 0,
      minWatchTimeoutSeconds: 0.1,
      maxListPages: 0,
      backoff: { initialMs: 100, maxMs: Infinity, jitter: 0, factor: 0, resetAfterMs: 0 },
      http: { requestTimeoutMs: 0, maxListTotalBytes: Infinity, http2: { readIdleMs: Infinity } },
    });
    expect(() => informer(offlineKc(), ConfigMap, good)).not.toThrow();
    const { http: _http, ...reflector } = good as Record<string, unknown>;
    for (const call of directCalls(reflector)) expect(call).not.toThrow();
    expect(directCalls(reflector)).toHaveLength(2);
  });
});

describe('the inner helpers fall back to the default for NaN or a negative value, never to "off"', () => {
  it('timerMs: NaN and negative → the fallback; 0 and Infinity → none (as docs/transport.md says)', () => {
    expect(timerMs(NaN, 30_000)).toBe(30_000);
    expect(timerMs(-1, 30_000)).toBe(30_000);
    expect(timerMs(0, 30_000)).toBeUndefined();
    expect(timerMs(Infinity, 30_000)).toBeUndefined();
    expect(timerMs(undefined, 30_000)).toBe(30_000);
    expect(byteLimit(NaN, 1024)).toBe(1024);
  });

  it("reflectorConfig: a NaN or negative duration or count is the default (a NaN stall margin re-armed the watch's check every millisecond)", () => {
    const decode = (() => undefined) as never;
    const config = reflectorConfig({
      decode,
      stallMarginMs: NaN,
      idleTimeoutMs: -5,
      pageSize: NaN,
      bookmarkTimeoutMs: NaN,
      maxListPages: -1,
    });
    expect(config.stallMarginMs).toBe(30_000);
    expect(config.idleTimeoutMs).toBe(60_000);
    expect(config.pageSize).toBe(500);
    expect(config.bookmarkTimeoutMs).toBeUndefined();
    expect(config.maxListPages).toBe(10_000);
    expect(reflectorConfig({ decode, stallMarginMs: 0, idleTimeoutMs: 0 })).toMatchObject({ stallMarginMs: 0, idleTimeoutMs: 0 });
    // bookmarkTimeoutMs: 0 is off, as its default (left62: a deadline of 0 aborted each watch at its first check).
    expect(reflectorConfig({ decode, bookmarkTimeoutMs: 0 }).bookmarkTimeoutMs).toBeUndefined();
    expect(reflectorConfig({ decode, bookmarkTimeoutMs: 5_000 }).bookmarkTimeoutMs).toBe(5_000);
  });

  it('listAndWatch and Backoff refuse what an informer refuses, with the same message after their name (left71)', () => {
    expect(() => listAndWatch(unused, { decode, minWatchTimeoutSeconds: 0 })).toThrow(
      'listAndWatch: `minWatchTimeoutSeconds` must be a number > 0 (finite), got a number (0)',
    );
    expect(() => listAndWatch(unused, { decode, bookmarkTimeoutMs: NaN })).toThrow(
      'listAndWatch: `bookmarkTimeoutMs` must be a number ≥ 0 or Infinity, got a number (NaN)',
    );
    expect(() => listAndWatch(unused, { decode, backoff: 5 as never })).toThrow(
      'listAndWatch: `backoff` must be an object, got a number (5)',
    );
    expect(() => new Backoff({ initialMs: 0, jitter: 0 })).toThrow(
      'Backoff: `backoff.initialMs` must be a number > 0 (finite), got a number (0)',
    );
    expect(() => new Backoff({ maxMs: 0 })).toThrow('Backoff: `backoff.maxMs` must be a number > 0 or Infinity, got a number (0)');
    const waits = (b: Backoff) => [b.next(0), b.next(1), b.next(2), b.next(3)];
    expect(waits(new Backoff({ maxMs: 2_000, jitter: 0 }))).toEqual([800, 1600, 2000, 2000]);
  });
});
