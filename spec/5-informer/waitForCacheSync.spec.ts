import { KubeConfig } from '@kubernetes/client-node';
import { NEVER, concat, firstValueFrom, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { InformerError, cacheSynced$, informerFactory, waitForCacheSync } from '../../src/index.ts';
import type { Syncable } from '../../src/5-informer/factory.ts';
import { failure, fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';
import { TestScheduler } from 'rxjs/testing';

/** A KubeConfig nothing connects to: the calls below are rejected before anything is subscribed. */
function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const widgets = () => fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'), kubeObj('b'))), NEVER));

async function rejection(promise: Promise<unknown>): Promise<string> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof InformerError ? `${error.reason}: ${error.message}` : `not an InformerError: ${String(error)}`;
}

describe('waitForCacheSync', () => {
  it('rejects with a Config error naming the expected array when given informers one by one (cacheSynced$ style)', async () => {
    const one = widgets();
    const expected =
      'expected an array of informers, as in waitForCacheSync([pods, deployments]) (cacheSynced$(pods, deployments) takes them one by one)';
    expect(await rejection(waitForCacheSync(one as unknown as Syncable[]))).toBe(`Config: waitForCacheSync: ${expected}; got object`);
    expect(await rejection(informerFactory(kubeConfig()).waitForCacheSync(one as unknown as Syncable[]))).toBe(
      `Config: waitForCacheSync: ${expected}; got object`,
    );
    expect(await rejection(waitForCacheSync([one, undefined as unknown as Syncable]))).toBe(
      `Config: waitForCacheSync: ${expected}; item 1 has no synced$`,
    );
  });

  it('start → wait → read: subscribed first, the synced cache is there after the wait', async () => {
    const pods = widgets();
    const running = pods.store$.subscribe();
    await expect(waitForCacheSync([pods])).resolves.toBe(true);
    expect((await firstValueFrom(pods.store$)).size).toBe(2);
    running.unsubscribe();
  });
});

describe('waitForCacheSync({ timeoutMs }): the timeout says which informers did not sync, and why', () => {
  /** Runs the wait in virtual time (the informers' sources are cold marbles, `timeout` runs on the virtual clock). */
  function timedOut(informers: readonly Syncable[], timeoutMs: number): Promise<string> {
    let waited!: Promise<true>;
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(() => {
      waited = waitForCacheSync(informers, { timeoutMs });
    });
    return rejection(waited);
  }
  const forbidden = (plural: string) =>
    fakeInformer(
      fakeResource({ plural }),
      concat(
        of(failure('Forbidden', `${plural}.example.com is forbidden: User "u" cannot list resource`, { phase: 'list', status: 403 })),
        NEVER,
      ),
    );

  it('names each unsynced informer with its last error, not the synced ones', async () => {
    expect(await timedOut([widgets(), forbidden('gadgets'), fakeInformer(fakeResource({ plural: 'quiet' }), NEVER)], 1500)).toBe(
      'Timeout: caches did not sync within 1500 ms: gadgets.example.com (Forbidden: gadgets.example.com is forbidden: User "u" cannot ' +
        'list resource); quiet.example.com (no error yet)',
    );
  });

  it('names an error met before the wait began (a refused informer retries only every 30 s or so)', async () => {
    const refused = forbidden('gadgets');
    // Running (and refused) before the wait: the replayed state has forgotten its step's errors.
    const running = refused.store$.subscribe();
    expect(await timedOut([refused], 1500)).toBe(
      'Timeout: caches did not sync within 1500 ms: gadgets.example.com (Forbidden: gadgets.example.com is forbidden: User "u" cannot ' +
        'list resource)',
    );
    running.unsubscribe();
  });

  it('names at most three, then counts the others; a long message is cut', async () => {
    const long = fakeInformer(fakeResource({ plural: 'long' }), concat(of(failure('ServerError', 'x'.repeat(1000))), NEVER));
    const message = await timedOut([long, forbidden('a'), forbidden('b'), forbidden('c'), forbidden('d')], 10_000);
    expect(message).toMatch(
      /^Timeout: caches did not sync within 10000 ms: long\.example\.com \(ServerError: x{200}… \(1000 bytes\)\); a\.example\.com/,
    );
    expect(message).toMatch(/; b\.example\.com \(Forbidden: [^)]*\); 2 more$/);
  });
});

describe('cacheSynced$', () => {
  it('takes the informers one by one or as an array (as waitForCacheSync)', async () => {
    const pods = widgets();
    const deployments = widgets();
    await expect(firstValueFrom(cacheSynced$(pods, deployments))).resolves.toBe(true);
    await expect(firstValueFrom(cacheSynced$([pods, deployments]))).resolves.toBe(true);
    await expect(firstValueFrom(cacheSynced$([pods]))).resolves.toBe(true);
    await expect(firstValueFrom(cacheSynced$([]))).resolves.toBe(true);
  });

  it('errors with a Config error, not a TypeError, when an item is no informer', async () => {
    const expected = 'expected informers, as in cacheSynced$(pods, deployments) or cacheSynced$([pods, deployments])';
    const pods = widgets();
    expect(await rejection(firstValueFrom(cacheSynced$(pods, undefined as unknown as Syncable)))).toBe(
      `Config: cacheSynced$: ${expected}; item 1 has no synced$`,
    );
    expect(await rejection(firstValueFrom(cacheSynced$([pods, [pods]] as unknown as Syncable[])))).toBe(
      `Config: cacheSynced$: ${expected}; item 1 has no synced$`,
    );
  });
});
