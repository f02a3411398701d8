/**
 * keys.ts is the one home of `namespace/name`: every user of a key (the informer's caches, the store's layout,
 * the many-namespace filter, owner keys, the sharded informer's filter, the CLI's lines) builds and splits keys
 * with it, so they agree on every namespace and name. spec/repo/oneHome.spec.ts finds a second builder in src/.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  joinKey,
  keyOf,
  nameInNamespace,
  nameOfKey,
  namespaceOfKey,
  namespaceOfObjectKey,
  rawKey,
  splitKey,
} from '../../src/0-model/keys.ts';
import { Store } from '../../src/4-store/store.ts';
import { controllerOwnerKey } from '../../src/controller/ownerKeys.ts';
import { prettyLine } from '../../src/cli/record.ts';

/** Namespaces as Kubernetes allows them (DNS labels), and names that may hold a "/" (a cluster-scoped object's may). */
const namespaceArb = fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/));
const nameArb = fc.string({ minLength: 1, maxLength: 24 });

describe('keys: one builder, one splitter, and every user agrees with them', () => {
  it('joinKey, keyOf and rawKey build the same key; splitKey and the store read it back', () => {
    fc.assert(
      fc.property(namespaceArb, nameArb, (namespace, name) => {
        const object = { metadata: { name, ...(namespace ? { namespace } : {}) } };
        const key = joinKey(namespace, name);
        expect(keyOf(object)).toBe(key);
        expect(rawKey(object)).toBe(key);
        expect(key).toBe(namespace ? `${namespace}/${name}` : name);
        const owning = namespaceOfObjectKey(key, object);
        expect(owning).toBe(namespace);
        expect(nameInNamespace(owning, key)).toBe(name);
        if (!name.includes('/') || namespace) {
          expect(splitKey(key)).toEqual({ namespace: namespaceOfKey(key), name: nameOfKey(key) });
          if (!name.includes('/')) expect(splitKey(key)).toEqual({ namespace, name });
        }
        const store = Store.empty<typeof object>().batch();
        store.write(key, undefined, object);
        const done = store.done();
        expect(done.get(key)).toBe(object);
        expect(done.keys()).toEqual([key]);
      }),
      { numRuns: 300 },
    );
  });

  it("an owner's key and the CLI's line name the object by the same key", () => {
    fc.assert(
      fc.property(namespaceArb, fc.stringMatching(/^[a-z0-9][-a-z0-9.]{0,20}$/), fc.boolean(), (namespace, name, namespaced) => {
        const owned = {
          metadata: {
            name: 'child',
            ...(namespace ? { namespace } : {}),
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: 'u', controller: true }],
          },
        };
        const owner = { group: 'apps', kind: 'ReplicaSet', namespaced };
        expect(controllerOwnerKey(owned as never, owner)).toBe(joinKey(namespaced ? namespace : '', name));
        const line = prettyLine(
          { time: '', type: 'ADDED', resource: 'pods', name, ...(namespace ? { namespace } : {}) },
          new Date(0),
          true,
        );
        expect(line.endsWith(` pods ${joinKey(namespace, name)}`)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
