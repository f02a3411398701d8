/**
 * An informer over several namespaces, one by one (the per-namespace fallback), whose requests fail for want of a
 * file descriptor (`EMFILE`) at start: the failure is said once for all of them, and once the shortage has passed the
 * turns' bound steps back up (src/5-informer/connectionTurns.ts), so the namespaces stop taking turns and each keeps
 * its watch open (before, the informer took turns at the lowered bound for good). In virtual time at the default
 * options (turn 2 s, quiet minute, the reflector's backoff and idle rule); the transport is replaced by in-memory
 * ListWatches (`httpListWatch` is mocked).
 */
import { NEVER, map, throwError, timer, type Observable } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, informer, InformerError } from '../../src/index.ts';
import type { ListWatchTarget } from '../../src/pipeline.ts';
import { DEFAULT_DESCRIPTORS_QUIET_MS, DEFAULT_TURN_MS } from '../../src/5-informer/connectionTurns.ts';
import { fakeListWatch, listPage, type FakeListWatch } from '../../src/testing/index.ts';
import { leakCheckingScheduler } from '../../marbles/support/leakCheckingScheduler.ts';
import type { TestScheduler } from 'rxjs/testing';

/** What each namespace's ListWatch is, made by the test before the informer asks for it. */
const byNamespace = new Map<string, FakeListWatch>();

vi.mock('../../src/1-transport/httpTransport.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/1-transport/httpTransport.ts')>();
  return {
    ...original,
    httpListWatch: (_kc: KubeConfig, target: ListWatchTarget) => {
      const lw = byNamespace.get(target.namespace ?? '');
      if (!lw) throw new Error(`no ListWatch for namespace ${target.namespace}`);
      return lw;
    },
  };
});

afterEach(() => byNamespace.clear());

const emfile = () =>
  new InformerError('NetworkError', 'list /api/v1/namespaces/x/configmaps: connect EMFILE 127.0.0.1:1 - Local (undefined:undefined)', {
    phase: 'list',
    cause: Object.assign(new Error('connect EMFILE 127.0.0.1:1 - Local (undefined:undefined)'), { code: 'EMFILE' }),
    unreachable: false,
  });

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

/** A namespace whose first `failures` lists fail with EMFILE at once; then lists take 100 ms, watches never end. */
function namespace(scheduler: TestScheduler, failures: number): FakeListWatch {
  return fakeListWatch(
    {
      lists: Array.from({ length: 100 }, (_, i): Observable<ReturnType<typeof listPage>> =>
        i < failures ? throwError(() => emfile()) : timer(100, scheduler).pipe(map(() => listPage('7', []))),
      ),
      watches: Array.from({ length: 1000 }, () => NEVER),
    },
    { scheduler },
  );
}

describe('the per-namespace fallback after EMFILE, at the default options in virtual time', () => {
  it('two namespaces fail alike: one notice; a quiet minute later the bound is back up, and the watches stop taking turns', () => {
    const Q = DEFAULT_DESCRIPTORS_QUIET_MS;
    const scheduler = leakCheckingScheduler(10 * Q);
    scheduler.run(() => {
      // a and b list; c and d fail for want of a descriptor: 64 connections lowered to what a and b hold (2).
      for (const [name, failures] of [
        ['a', 0],
        ['b', 0],
        ['c', 1],
        ['d', 1],
      ] as const)
        byNamespace.set(name, namespace(scheduler, failures));
      const inf = informer(kubeConfig(), ConfigMap, { namespaces: ['a', 'b', 'c', 'd'], scheduler, http: { protocol: 'http1' } });
      const errors: InformerError[] = [];
      let syncedAt: number | undefined;
      const subs = [
        inf.errors$.subscribe((e) => errors.push(e)),
        inf.synced$.subscribe((synced) => {
          if (synced) syncedAt ??= scheduler.now();
        }),
      ];
      const watches = () => [...byNamespace.values()].flatMap((lw) => lw.watches);
      scheduler.schedule(() => {
        // Synced, on turns: watches granted while others waited asked the server for one turn.
        expect(syncedAt).toBeDefined();
        expect(syncedAt!).toBeLessThan(Q);
        expect(watches().some((w) => w.calledAt < Q && w.options.timeoutSeconds === DEFAULT_TURN_MS / 1000)).toBe(true);
      }, Q - 1);
      scheduler.schedule(() => {
        // One notice for both namespaces' EMFILE, and nothing else.
        expect(errors.map((e) => e.message.slice(0, 'too many open files'.length))).toEqual(['too many open files']);
        expect(errors[0]!.message).toMatch(
          /at most 2, one fewer at each such failure, a step back up after each quiet minute, longer while it recurs/,
        );
        // From the step back up (at Q) on, every namespace holds its watch: none is shortened to a turn, and none is
        // ended by the turns (the reflector's own idle rule reopens each at most once a minute).
        const late = watches().filter((w) => w.calledAt > Q + 2 * DEFAULT_TURN_MS);
        expect(late.filter((w) => w.options.timeoutSeconds === DEFAULT_TURN_MS / 1000)).toEqual([]);
        for (const lw of byNamespace.values()) {
          const opened = lw.watches.filter((w) => w.calledAt > Q + 2 * DEFAULT_TURN_MS && w.calledAt <= 4 * Q);
          expect(opened.length).toBeLessThanOrEqual(3);
        }
        for (const s of subs) s.unsubscribe();
      }, 4 * Q);
    });
  });
});
