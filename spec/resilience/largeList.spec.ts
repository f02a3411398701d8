/**
 * A list larger than `maxListBytes` on a server whose watch cache answers a list at
 * resourceVersion "0" whole, ignoring `limit` (kube-apiserver up to at least v1.20, recorded in
 * 02h; the emulator does the same): the informer falls back to a paged consistent list
 * (resourceVersion "", `limit`) whose pages fit, and syncs, instead of sending the same rv-0
 * request after every backoff forever. Waits run on a clock that holds every timer longer
 * than 0 ms until the test fires it: how many backoff steps the sync took is counted, not timed.
 */
import { Subscription, asyncScheduler, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, run, waitFor, type Running } from './harness/live.ts';

let api: ApiServer | undefined;
let live: Running<ConfigMap> | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

/** A scheduler that runs 0 ms work at once (asynchronously) and holds longer waits until `fire()`. */
class HeldTimers implements SchedulerLike {
  readonly held: { delay: number; fire: () => void; cancelled: () => boolean }[] = [];

  now(): number {
    return Date.now();
  }

  schedule<S>(work: (this: SchedulerAction<S>, state?: S) => void, delay = 0, state?: S): Subscription {
    if (delay <= 0) return asyncScheduler.schedule(work, 0, state);
    const outer = new Subscription();
    this.held.push({ delay, fire: () => outer.add(asyncScheduler.schedule(work, 0, state)), cancelled: () => outer.closed });
    return outer;
  }

  /** Fires the oldest held timer still armed; false when there is none. */
  fireNext(): boolean {
    const next = this.held.find((t) => !t.cancelled());
    if (!next) return false;
    this.held.splice(this.held.indexOf(next), 1);
    next.fire();
    return true;
  }
}

/** 1,500 ConfigMaps of about 1.3 KB: about 2 MB as one list, 650 KB a page of 500 (the measurement on a real server). */
function fill(server: ApiServer, bytes = 1200): void {
  const value = 'x'.repeat(bytes);
  for (let i = 0; i < 1500; i++) server.create('configmaps', cm(`cm-${String(i).padStart(4, '0')}`, 'big', { value }));
}

describe('a list larger than maxListBytes, answered whole at resourceVersion "0"', () => {
  it('syncs through a paged list at resourceVersion "" within one backoff step (default options but maxListBytes)', async () => {
    api = await startApiServer();
    fill(api);
    const clock = new HeldTimers();
    live = run(api, ConfigMap, { namespace: 'big', scheduler: clock, http: { maxListBytes: 1_000_000 } });
    let fired = 0;
    // Until it syncs, a held timer is the backoff wait the reflector is in (it has one request or timer at a
    // time, and watch timers start only after the list): fire it, and count the step.
    await waitFor('the informer to sync, or a third backoff step', () => {
      if (live!.synced() || fired >= 3) return true;
      if (clock.fireNext()) fired++;
      return false;
    });
    expect(live.synced(), `lists: ${JSON.stringify(live.lists().map((l) => l.query))}`).toBe(true);
    expect(fired, 'backoff steps before the sync').toBeLessThanOrEqual(1);
    expect(live.store()?.size).toBe(1500);

    const [whole, ...paged] = live.lists();
    // The first list: rv "0" with a limit, answered whole (the watch cache ignores limit), too large.
    expect(whole?.query).toMatchObject({ resourceVersion: '0', limit: '500' });
    expect(live.errors.map((e) => e.reason)).toEqual(['ResponseTooLarge']);
    expect(live.errors[0]?.message).toMatch(/larger than the 1000000 bytes limit .*option maxListBytes/);
    // Then never the same request again: a consistent list at rv "" (sent as no resourceVersion) in pages
    // of 500, each within the limit.
    expect(paged.map((l) => [l.query['resourceVersion'], l.query['limit'], l.query['continue'] === undefined])).toEqual([
      [undefined, '500', true],
      [undefined, '500', false],
      [undefined, '500', false],
    ]);
  });

  it('pages that do not fit either: the next list asks for half as many items, after one backoff step', async () => {
    api = await startApiServer();
    fill(api, 2600); // about 1.4 MB a page of 500, 700 KB a page of 250
    const clock = new HeldTimers();
    live = run(api, ConfigMap, { namespace: 'big', scheduler: clock, http: { maxListBytes: 1_000_000 } });
    let fired = 0;
    await waitFor('the informer to sync, or a third backoff step', () => {
      if (live!.synced() || fired >= 3) return true;
      if (clock.fireNext()) fired++;
      return false;
    });
    expect(live.synced(), `lists: ${JSON.stringify(live.lists().map((l) => l.query))}`).toBe(true);
    expect(fired, 'backoff steps before the sync').toBe(1);
    expect(live.store()?.size).toBe(1500);
    expect(live.errors.map((e) => e.reason)).toEqual(['ResponseTooLarge', 'ResponseTooLarge']);
    const asked = live.lists().map((l) => [l.query['resourceVersion'], l.query['limit'], l.query['continue'] === undefined]);
    // The page of 500 asked for its page 2 as soon as its token came (http.prefetchPages), given up when the page passed
    // the limit: at most that one request more (the server may not have seen it before the abort).
    const ahead = (l: unknown[]) => l[1] === '500' && l[2] === false;
    expect(asked.filter(ahead).length).toBeLessThanOrEqual(1);
    expect(asked.filter((l) => !ahead(l))).toEqual([
      ['0', '500', true], // whole: too large
      [undefined, '500', true], // a page of 500: too large
      [undefined, '250', true], // then pages of 250, which fit
      ...Array.from({ length: 5 }, () => [undefined, '250', false]),
    ]);
  });
});
