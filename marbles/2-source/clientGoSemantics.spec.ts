/**
 * Two of client-go's rules we follow (issue #21, item 5; docs/semantics.md):
 * - an object of another kind on a watch is skipped without recording its
 *   resourceVersion (nor counting as an event, nor deleting anything);
 * - a `transform` that renames an object files it under the new key
 *   (client-go's TestSharedInformerTransformer).
 */
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { ConfigMap, KubeObject, informer, type InformerError } from '../../src/index.ts';
import { decoder, listAndWatch, type SourceEvent, type WatchFrame } from '../../src/pipeline.ts';
import { fakeListWatch, listPage, watchEvent } from '../support/fakeListWatch.ts';

const cm = (name: string, rv: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});
const secret = (name: string, rv: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('an object of another kind on a watch (as client-go)', () => {
  it('is reported and skipped: the resourceVersion does not move, nothing is deleted', () => {
    const ts = scheduler();
    ts.run(({ cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [cm('a', '5')]) })],
        watches: [
          cold<WatchFrame>('-x-o-d 2000ms |', {
            x: watchEvent('MODIFIED', cm('a', '11')),
            o: watchEvent('ADDED', secret('s', '20')),
            d: watchEvent('DELETED', secret('a', '21')),
          }),
        ],
      });
      const events: SourceEvent<KubeObject>[] = [];
      const subscription = listAndWatch<KubeObject>(fake, {
        decode: decoder(KubeObject, undefined, { apiVersion: 'v1', kind: 'ConfigMap' }),
        scheduler: ts,
        random: () => 0,
      }).subscribe((event) => events.push(event));
      ts.schedule(() => subscription.unsubscribe(), 3_000);
      flush();
      const summary = events.map((e) =>
        e.type === 'error' ? `error ${e.error.reason}` : `${e.type}@${'resourceVersion' in e ? e.resourceVersion : ''}`,
      );
      expect(summary).toEqual(['replace@10', 'watch@10', 'modified@11', 'error ValidationFailed', 'error ValidationFailed', 'watch@11']);
      expect(fake.watches[1]?.options).toMatchObject({ resourceVersion: '11' });
    });
  });
});

describe('a transform that renames an object (as client-go)', () => {
  it('caches it under the new key; a deletion of the original removes it', () => {
    const ts = scheduler();
    ts.run(({ cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [cm('a', '5')]) })],
        watches: [cold<WatchFrame>('--m--d', { m: watchEvent('ADDED', cm('b', '11')), d: watchEvent('DELETED', cm('a', '12')) })],
      });
      const renamed = (object: ConfigMap): ConfigMap => ({
        ...object,
        metadata: { ...object.metadata, name: `${object.metadata.name}-renamed` },
      });
      const cms = informer(fake, ConfigMap, { transform: renamed, scheduler: ts, random: () => 0 });
      const keys: string[][] = [];
      const errors: InformerError[] = [];
      const subscription = cms.store$.subscribe((store) => keys.push([...store.keys()].sort()));
      subscription.add(cms.errors$.subscribe((error) => errors.push(error)));
      ts.schedule(() => subscription.unsubscribe(), 100);
      flush();
      expect(errors).toEqual([]);
      expect(keys).toEqual([[], ['ns/a-renamed'], ['ns/a-renamed', 'ns/b-renamed'], ['ns/b-renamed']]);
    });
  });
});
