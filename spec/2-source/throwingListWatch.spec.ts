/**
 * A ListWatch whose `list()` or `watch()` throws instead of returning an Observable (plain JavaScript, a fake, a
 * transport with a bug) fails that request, as one returning an Observable that errors does: the fault is reported on
 * `errors$` and the request retried after the backoff. audit39: the throw came out of the reflector and ended
 * `state$` for good (and, served, killed the process from a timer). Virtual time, default options (`random` 0: the
 * backoff's lower bound, 800 ms).
 */
import { NEVER, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { informer, Pod, type KubeObject } from '../../src/index.ts';
import type { ListWatch } from '../../src/pipeline.ts';
import { kubeObj, listPage } from '../../src/testing/index.ts';

type Seen = { at: number; what: string };

/** An informer over `lw` for `untilMs` of virtual time: its steps, errors and the end of `state$`, if any. */
function run(lw: ListWatch, untilMs: number): Seen[] {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  const seen: Seen[] = [];
  scheduler.run(({ flush }) => {
    const pods = informer<KubeObject>(lw, Pod as never, { scheduler, random: () => 0 });
    const at = () => scheduler.now();
    const s = pods.state$.subscribe({
      next: (state) => {
        for (const e of state.errors) seen.push({ at: at(), what: `error ${e.reason} ${e.phase}: ${e.message}` });
        if (state.step === 'replace') seen.push({ at: at(), what: `synced ${state.store.size}` });
      },
      error: (e: unknown) => seen.push({ at: at(), what: `state$ errored: ${String(e)}` }),
      complete: () => seen.push({ at: at(), what: 'state$ completed' }),
    });
    scheduler.schedule(() => s.unsubscribe(), untilMs);
    flush();
  });
  return seen;
}

const page = () => of(listPage('5', [kubeObj('p1', { namespace: 'a', kind: 'Pod', resourceVersion: '5' })]));

describe('a ListWatch that throws synchronously (audit39)', () => {
  it('list() throws once: reported, listed again after the backoff (800 ms), synced; state$ goes on', () => {
    let lists = 0;
    const lw: ListWatch = {
      list: () => {
        if (lists++ === 0) throw new Error('list() threw');
        return page();
      },
      watch: () => NEVER,
    };
    const seen = run(lw, 10_000);
    expect(seen.filter((s) => !s.what.startsWith('error') || s.what.includes('list() threw'))).toEqual([
      { at: 0, what: expect.stringMatching(/^error \w+ list: .*list\(\) threw/) },
      { at: 800, what: 'synced 1' },
    ]);
    expect(lists).toBe(2);
  });

  it('watch() throws every time: each reported, watched again after the growing backoff; state$ never ends', () => {
    let watches = 0;
    const lw: ListWatch = {
      list: page,
      watch: () => {
        watches++;
        throw new TypeError('watch() threw');
      },
    };
    const seen = run(lw, 10_000);
    expect(seen.some((s) => s.what.startsWith('state$'))).toBe(false);
    const thrown = seen.filter((s) => s.what.includes('watch() threw'));
    expect(thrown.length).toBeGreaterThanOrEqual(3);
    expect(thrown.every((s) => /^error \w+ watch: /.test(s.what))).toBe(true);
    expect(watches).toBe(thrown.length);
  });
});
