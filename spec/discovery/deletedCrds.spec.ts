/**
 * The CRDs a dynamic watch saw deleted (src/discovery/dynamicInformers.ts, `deletedCrds`): a discovery that raced the
 * deletion (still listing the CRD) must not start it anew; a name leaves once a discovery read its group without it,
 * or when the CRD is created again. Before (review audit15), a name left only when its CRD was created again: e2e
 * clusters churning generated CRD names grew the set for the life of a `watch()`.
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import type { DiscoveredResource, DiscoveryFailure } from '../../src/discovery/discovery.ts';
import { deletedCrds } from '../../src/discovery/dynamicInformers.ts';

const resource = (plural: string, group: string): DiscoveredResource => ({
  group,
  version: 'v1',
  plural,
  singular: plural,
  kind: plural,
  namespaced: true,
  verbs: ['list', 'watch'],
  shortNames: [],
  categories: [],
});
const served = (...all: DiscoveredResource[]) => ({ all, failures: [] as DiscoveryFailure[] });
const failing = (groupVersion: string, ...all: DiscoveredResource[]) => ({
  all,
  failures: [{ groupVersion, error: new InformerError('ServerError', 'the server is currently unable to handle the request') }],
});
const apples = resource('apples', 'stable.example.com');
const pods = resource('pods', '');

describe('deletedCrds: the CRDs a dynamic watch saw deleted', () => {
  it('a discovery that raced the deletion (still lists it) does not make it startable, and keeps it', () => {
    const deleted = deletedCrds();
    deleted.deleted('apples.stable.example.com');
    deleted.discovered(served(pods, apples));
    expect(deleted.racing('apples.stable.example.com')).toBe(true);
    expect(deleted.size).toBe(1);
  });

  it('a discovery that could not read its group keeps it (it says nothing of the CRD)', () => {
    const deleted = deletedCrds();
    deleted.deleted('apples.stable.example.com');
    deleted.discovered(failing('stable.example.com/v1', pods));
    expect(deleted.racing('apples.stable.example.com')).toBe(true);
    deleted.discovered(failing('other.example.com/v1', pods));
    expect(deleted.racing('apples.stable.example.com')).toBe(false);
  });

  it('a discovery that read its group without it forgets it (every later one started after it)', () => {
    const deleted = deletedCrds();
    deleted.deleted('apples.stable.example.com');
    deleted.discovered(served(pods));
    expect(deleted.racing('apples.stable.example.com')).toBe(false);
    expect(deleted.size).toBe(0);
  });

  it('created again: startable at once', () => {
    const deleted = deletedCrds();
    deleted.deleted('apples.stable.example.com');
    deleted.created('apples.stable.example.com');
    expect(deleted.racing('apples.stable.example.com')).toBe(false);
  });

  it('1 000 distinct CRD names created and deleted, a discovery after each: the set stays at most one name', () => {
    const deleted = deletedCrds();
    let most = 0;
    for (let i = 0; i < 1_000; i++) {
      const name = `gen${i}.e2e.example.com`;
      deleted.created(name);
      // A discovery that raced the deletion lists it; the next one does not.
      deleted.deleted(name);
      deleted.discovered(served(pods, resource(`gen${i}`, 'e2e.example.com')));
      most = Math.max(most, deleted.size);
      deleted.discovered(served(pods));
    }
    expect(most).toBe(1);
    expect(deleted.size).toBe(0);
  });
});
