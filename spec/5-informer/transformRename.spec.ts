/**
 * docs/invalid-objects.md rules 4 and 5 for an object a `transform` renames (audit42, finding 1): the cache files it
 * under the transformed object's key, so a later version the transform throws for, or that fails its schema (audit49:
 * the decoder's renames are read for every rejected key), must be matched to that key, not to the raw object's.
 * Virtual time: the fake's pages and events are cold Observables on the TestScheduler.
 */
import { NEVER } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { Pod, informer, type InformerEvent } from '../../src/index.ts';
import type { ListPage, RawWatchEvent } from '../../src/pipeline.ts';
import { fakeListWatch, kubeObj, listPage, watchBookmark, watchEvent, watchStatus } from '../../src/testing/index.ts';

/** The bookmark that ends a streaming list's initial events. */
const END = { 'k8s.io/initial-events-end': 'true' };

const pod = (name: string, resourceVersion: string, bad = false) =>
  kubeObj(Pod, name, { namespace: 'default', resourceVersion, labels: bad ? { bad: 'true' } : {} });
/** A pod its schema rejects (a label value that is no string): the transform never sees it. */
const invalidPod = (name: string, resourceVersion: string): Pod => {
  const p = pod(name, resourceVersion);
  return { ...p, metadata: { ...p.metadata, labels: { broken: 1 as unknown as string } } };
};

/** Renames every pod to t-NAME (the uid kept); throws for a pod labelled bad. */
const transform = (p: Pod): Pod => {
  if (p.metadata.labels?.['bad']) throw new Error('cannot handle bad');
  return { ...p, metadata: { ...p.metadata, name: `t-${p.metadata.name}` } };
};

interface Run {
  readonly keys: string[][];
  readonly events: string[];
  readonly errors: string[];
}

/** Runs an informer with the transform over the fake's lists and watches for a virtual minute. */
function run(
  lists: string[],
  listValues: Record<string, ListPage>,
  watches: string[],
  watchValues: Record<string, RawWatchEvent>,
  watchList = false,
): Run {
  const out: Run = { keys: [], events: [], errors: [] };
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  scheduler.run(({ cold }) => {
    const fake = fakeListWatch({
      lists: lists.map((m) => cold(m, listValues)),
      watches: [...watches.map((m) => cold(m, watchValues)), NEVER],
    });
    const inf = informer(fake, Pod, { transform, watchList });
    const subs = [
      inf.errors$.subscribe((e) => out.errors.push(e.reason)),
      inf.events$.subscribe((e: InformerEvent<Pod>) =>
        out.events.push(
          `${e.type} ${e.object.metadata.name}${e.type === 'deleted' && e.finalStateUnknown ? ' (final state unknown)' : ''}`,
        ),
      ),
      inf.store$.subscribe((s) => out.keys.push(s.keys().sort())),
    ];
    scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 60_000);
  });
  return out;
}

describe('a transform that renames, then throws for a later version', () => {
  it('rule 4: a relist listing the object with a version the transform throws for makes no deletion of the renamed key', () => {
    const r = run(['(p|)', '(q|)'], { p: listPage('10', [pod('a', '10')]), q: listPage('20', [pod('a', '20', true)]) }, ['-x'], {
      x: watchStatus(410),
    });
    expect(r.errors).toContain('TransformError');
    expect(r.events).toEqual(['added t-a']);
    expect(r.keys.at(-1)).toEqual(['default/t-a']);
  });

  it('rule 5: a DELETED whose object the transform throws for deletes the renamed key', () => {
    const r = run(['(p|)'], { p: listPage('10', [pod('a', '10')]) }, ['-d'], { d: watchEvent('DELETED', pod('a', '11', true)) });
    expect(r.errors).toEqual(['TransformError']);
    expect(r.events).toEqual(['added t-a', 'deleted t-a']);
    expect(r.keys.at(-1)).toEqual([]);
  });

  it('rule 4 on a streaming list (watchList): its initial events with the version the transform throws for make no deletion', () => {
    const r = run(
      [],
      {},
      ['(ae)-x', '(bf)'],
      {
        a: watchEvent('ADDED', pod('a', '10')),
        e: watchBookmark('10', END),
        x: watchStatus(410),
        b: watchEvent('ADDED', pod('a', '20', true)),
        f: watchBookmark('20', END),
      },
      true,
    );
    expect(r.errors).toContain('TransformError');
    expect(r.events).toEqual(['added t-a']);
    expect(r.keys.at(-1)).toEqual(['default/t-a']);
  });
});

describe('a transform that renames, then a later version fails validation (its schema, before any transform)', () => {
  it('rule 4: a relist listing the object invalid makes no deletion of the renamed key', () => {
    const r = run(['(p|)', '(q|)'], { p: listPage('10', [pod('a', '10')]), q: listPage('20', [invalidPod('a', '20')]) }, ['-x'], {
      x: watchStatus(410),
    });
    expect(r.errors).toContain('ValidationFailed');
    expect(r.events).toEqual(['added t-a']);
    expect(r.keys.at(-1)).toEqual(['default/t-a']);
  });

  it('rule 5: a DELETED whose object is invalid deletes the renamed key', () => {
    const r = run(['(p|)'], { p: listPage('10', [pod('a', '10')]) }, ['-d'], { d: watchEvent('DELETED', invalidPod('a', '11')) });
    expect(r.errors).toEqual(['ValidationFailed']);
    expect(r.events).toEqual(['added t-a', 'deleted t-a']);
    expect(r.keys.at(-1)).toEqual([]);
  });
});
