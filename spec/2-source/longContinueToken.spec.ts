/**
 * A continue token longer than MAX_CONTINUE_TOKEN_CHARS (16 KiB; kube-apiserver's are under 600 characters) is the
 * server's malformed answer: never sent back (Node refused its own ~100 KB HTTP/2 header block, and the failure read
 * "REFUSED_STREAM … refused by the API server"), a `MalformedLine` naming its length, relisted after the backoff as
 * other malformed answers are, not a stop. In virtual time, at the default options (backoff 800 ms; `random` 0).
 */
import { NEVER, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { decoder } from '../../src/2-source/decode.ts';
import { KubeObject } from '../../src/0-model/objects.ts';
import { listAndWatch } from '../../src/2-source/listAndWatch.ts';
import { MAX_CONTINUE_TOKEN_CHARS } from '../../src/1-transport/listWatch.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import { fakeListWatch, listPage } from '../../src/testing/index.ts';
import { obj } from './reflectorFixtures.ts';

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
