/**
 * A KubeConfig that names no server: the `Config` fault says the likely cause (audit19, finding 5: an empty
 * KubeConfig, `loadFromDefault()` forgotten, said only "the KubeConfig has no current cluster"), and is still retried.
 * Nothing listens anywhere: the request fails before any connection.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Pod, informer } from '../../src/index.ts';

const firstErrors = (kc: KubeConfig, count = 1) =>
  firstValueFrom(informer(kc, Pod, { reportUnobservedErrors: false }).errors$.pipe(take(count), toArray()));

describe('a KubeConfig without a current cluster', () => {
  it('empty (never loaded): asks whether loadFromDefault() was called, and is retried', async () => {
    const errors = await firstErrors(new KubeConfig(), 2);
    expect(errors.map((e) => `${e.reason} ${e.phase}: ${e.message}`)).toEqual([
      'Config list: the KubeConfig has no current cluster: it has none at all (did you call kc.loadFromDefault(), or another kc.load… method?)',
      'Config list: the KubeConfig has no current cluster: it has none at all (did you call kc.loadFromDefault(), or another kc.load… method?)',
    ]);
  });

  it('clusters but no current context', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    });
    expect((await firstErrors(kc))[0]?.message).toBe(
      'the KubeConfig has no current cluster: it has no current context (kc.setCurrentContext(), or a current-context in the file)',
    );
  });

  it('a current context naming a cluster it does not have', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:9' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'gone', user: 'u' }],
      currentContext: 'x',
    });
    expect((await firstErrors(kc))[0]?.message).toBe(
      'the KubeConfig has no current cluster: its current context "x" names no cluster it has (kc.setCurrentContext()?)',
    );
  });
});
