/**
 * When the dynamic factory's `discovery$` emits a discovery that came back (`signature`, src/discovery/dynamicInformers.ts):
 * whenever anything that resolves a name changed. audit28: a CRD update that added a short name (or a singular, or a
 * category) was read by discovery but not emitted (no CRD was created or deleted), so a watch by that name never
 * resolved.
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import type { DiscoveredResource, DiscoveryFailure } from '../../src/discovery/index.ts';
import { resolveResource } from '../../src/discovery/index.ts';
import { signature } from '../../src/discovery/dynamicInformers.ts';

const widgets: DiscoveredResource = {
  group: 'x.example.com',
  version: 'v1',
  plural: 'widgets',
  singular: 'widget',
  kind: 'Widget',
  namespaced: true,
  verbs: ['get', 'list', 'watch'],
  shortNames: [],
  categories: [],
  preferred: true,
};
const failure = (groupVersion: string, reason: 'ServerError' | 'Forbidden'): DiscoveryFailure => ({
  groupVersion,
  error: new InformerError(reason, `${reason} (GET /apis/${groupVersion})`),
});
const of = (r: DiscoveredResource, failures: DiscoveryFailure[] = []) => signature({ all: [r], failures });

describe('discovery$ emits a discovery that changed how names resolve', () => {
  it.each([
    ['a short name added (kubectl apply of the CRD with shortNames: [wd])', { shortNames: ['wd'] }, 'wd'],
    ['another singular', { singular: 'gadget' }, 'gadget'],
    ['a category added', { categories: ['all'] }, undefined],
    ['another kind', { kind: 'Gadget' }, 'gadget'],
    ['another scope', { namespaced: false }, undefined],
    ['other verbs', { verbs: ['get'] }, undefined],
  ] as const)('%s', (_, change, name) => {
    const after = { ...widgets, ...change };
    expect(of(after)).not.toBe(of(widgets));
    // What the change is for: the name now resolves (with it) where it did not (without).
    if (name !== undefined) {
      expect(resolveResource({ all: [widgets] }, name)).toBeInstanceOf(Error);
      expect(resolveResource({ all: [after] }, name)).toMatchObject({ plural: 'widgets' });
    }
  });

  it('a group version that may serve a name starts or stops failing (GroupDiscoveryFailed, not Unknown)', () => {
    expect(of(widgets, [failure('metrics.example.com/v1', 'ServerError')])).not.toBe(of(widgets));
  });

  it('the same resources and failing group versions, a fault of another reason: no new emission', () => {
    const a = of(widgets, [failure('metrics.example.com/v1', 'ServerError')]);
    expect(of({ ...widgets, shortNames: [] }, [failure('metrics.example.com/v1', 'Forbidden')])).toBe(a);
  });
});
