/**
 * A continue token longer than MAX_CONTINUE_TOKEN_CHARS (16 KiB; kube-apiserver's are under 600 characters) is the
 * server's malformed answer: never sent back (Node refused its own ~100 KB HTTP/2 header block, and the failure read
 * "REFUSED_STREAM … refused by the API server"), a `MalformedLine` naming its length, relisted after the backoff as
 * other malformed answers are, not a stop. In virtual time, at the default options (backoff 800 ms; `random` 0).
 */
import { NEVER, concat, of, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { decoder } from '../../src/2-source/decode.ts';
import { KubeObject } from '../../src/0-model/objects.ts';
import { listAndWatch } from '../../src/2-source/listAndWatch.ts';
import { MAX_CONTINUE_TOKEN_CHARS, MAX_RESOURCE_VERSION_CHARS } from '../../src/1-transport/listWatch.ts';
import { InformerError } from '../../src/0-model/errors.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import { fakeListWatch, listPage } from '../../src/testing/index.ts';
import { event, obj } from './reflectorFixtures.ts';

const decode = decoder(KubeObject);

function run(token: string) {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  let result: { lw: ReturnType<typeof fakeListWatch>; events: SourceEvent<KubeObject>[] } | undefined;
  scheduler.run(({ flush }) => {
    const lw = fakeListWatch({
      lists: [of(listPage('10', [obj('a', '5')], token)), of(listPage('12', [obj('a', '5'), obj('b', '6')]))],
      watches: [NEVER],
    });
    const events: SourceEvent<KubeObject>[] = [];
    const s = listAndWatch(lw, { decode, random: () => 0 }).subscribe((e) => events.push(e));
    scheduler.schedule(() => s.unsubscribe(), 60_000);
    flush();
    result = { lw, events };
  });
  return result!;
}

describe('a continue token past MAX_CONTINUE_TOKEN_CHARS', () => {
  it('a 100 KB token: not asked for; MalformedLine naming its length; page 1 again after the 800 ms backoff, then synced', () => {
    expect(MAX_CONTINUE_TOKEN_CHARS).toBe(16 * 1024);
    const { lw, events } = run('a'.repeat(100_000));
    expect(lw.lists.map((r) => [r.calledAt, r.options.continue === undefined ? 'first' : r.options.continue.length])).toEqual([
      [0, 'first'],
      [800, 'first'],
    ]);
    const errors = events.flatMap((e) => (e.type === 'error' ? [e.error] : []));
    expect(errors.map((e) => [e.reason, e.phase])).toEqual([['MalformedLine', 'list']]);
    expect(errors[0]?.message).toContain("the server's continue token is 100,000 characters, over the 16,384 sent back to it");
    expect(events.filter((e) => e.type === 'replace')).toMatchObject([{ resourceVersion: '12' }]);
  });

  it('a token of exactly the bound is sent back as it is', () => {
    const token = 'b'.repeat(MAX_CONTINUE_TOKEN_CHARS);
    const { lw, events } = run(token);
    expect(lw.lists.map((r) => r.options.continue)).toEqual([undefined, token]);
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
  });
});

describe('a resourceVersion past MAX_RESOURCE_VERSION_CHARS (1,024; an etcd revision has 20 digits at most)', () => {
  it('a list\'s: MalformedLine naming its length; listed again after the backoff at "0", never watched from it', () => {
    expect(MAX_RESOURCE_VERSION_CHARS).toBe(1024);
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ flush }) => {
      const lw = fakeListWatch({
        lists: [of(listPage('9'.repeat(2_000), [obj('a', '5')])), of(listPage('12', [obj('a', '5')]))],
        watches: [NEVER],
      });
      const events: SourceEvent<KubeObject>[] = [];
      const s = listAndWatch(lw, { decode, random: () => 0 }).subscribe((e) => events.push(e));
      scheduler.schedule(() => s.unsubscribe(), 60_000);
      flush();
      expect(lw.lists.map((r) => [r.calledAt, r.options.resourceVersion])).toEqual([
        [0, '0'],
        [800, '0'],
      ]);
      expect(lw.watches.map((r) => r.options.resourceVersion)).toEqual(['12']);
      const errors = events.flatMap((e) => (e.type === 'error' ? [e.error] : []));
      expect(errors.map((e) => [e.reason, e.message])).toEqual([
        ['MalformedLine', "the server's resourceVersion is 2,000 characters, over the 1,024 sent back to it; relisting after the backoff"],
      ]);
    });
  });

  it('an event\'s, refused by the transport when the watch resumes from it: the relist asks for the latest (""), not for it', () => {
    const long = '7'.repeat(2_000);
    // The transport's refusal (httpTransport: the request is not made), as the fake's watch answer.
    const refused = () =>
      throwError(
        () => new InformerError('MalformedLine', `the server's resourceVersion is 2,000 characters …; not sent`, { phase: 'watch' }),
      );
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ flush }) => {
      const lw = fakeListWatch({
        lists: [of(listPage('10', [obj('a', '5')])), of(listPage('20', [obj('a', '5'), obj('b', long)]))],
        watches: [
          concat(
            of(event('ADDED', obj('b', long))),
            throwError(() => new InformerError('NetworkError', 'reset', { phase: 'watch' })),
          ),
          refused(),
          refused(),
          NEVER,
        ],
      });
      const s = listAndWatch(lw, { decode, random: () => 0 }).subscribe();
      scheduler.schedule(() => s.unsubscribe(), 60_000);
      flush();
      expect(lw.lists.map((r) => r.options.resourceVersion)).toEqual(['0', '']);
      expect(lw.watches.map((r) => (r.options.resourceVersion === long ? 'long' : r.options.resourceVersion))).toEqual([
        '10',
        'long',
        'long',
        '20',
      ]);
    });
  });
  it('watchList: a streaming list\'s end bookmark with one, then the watch refused from it: the next streaming list from ""', () => {
    const long = '8'.repeat(2_000);
    const end = (rv: string) =>
      event('BOOKMARK', { metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } });
    const refused = () =>
      throwError(
        () => new InformerError('MalformedLine', `the server's resourceVersion is 2,000 characters …; not sent`, { phase: 'watch' }),
      );
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ flush }) => {
      const lw = fakeListWatch({
        watches: [
          concat(
            of(event('ADDED', obj('a', '5')), end(long)),
            throwError(() => new InformerError('NetworkError', 'reset', { phase: 'watch' })),
          ),
          refused(),
          refused(),
          concat(of(event('ADDED', obj('a', '5')), end('30')), NEVER),
        ],
      });
      const s = listAndWatch(lw, { decode, random: () => 0, watchList: true }).subscribe();
      scheduler.schedule(() => s.unsubscribe(), 60_000);
      flush();
      expect(
        lw.watches.map((r) => [
          r.options.sendInitialEvents === true,
          r.options.resourceVersion === long ? 'long' : r.options.resourceVersion,
        ]),
      ).toEqual([
        [true, ''],
        [false, 'long'],
        [false, 'long'],
        [true, ''],
      ]);
    });
  });
});
