/**
 * A list larger than a page (issue #31), in virtual time at default options: a whole answer at
 * resourceVersion "0" that passes `maxListBytes` is followed at once (no backoff) by a paged list at
 * resourceVersion "", and "0" is never asked again; a page of a paged list that does not fit halves the
 * next list's page size after one backoff step (800 ms at default options, random 0).
 */
import { describe, expect, it } from 'vitest';
import { asyncScheduler, defer, map, throwError, timer, mergeMap, type Observable } from 'rxjs';
import { InformerError, KubeObject } from '../../src/index.ts';
import type { ListOptions, ListPage, ListWatch, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { decoder, listAndWatch, type SourceEvent } from '../../src/pipeline.ts';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';

const widget: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '5' } };
const tooLarge = () =>
  new InformerError('ResponseTooLarge', 'list: the response is larger than the 256 MiB limit; aborted (option maxListBytes)', {
    status: 200,
    phase: 'list',
  });

/** Lists answer 1 ms later: `answer(options)` is a page, or an error (the transport's ResponseTooLarge). */
function server(answer: (options: ListOptions) => ListPage | InformerError): ListWatch & { readonly lists: [number, ListOptions][] } {
  const lists: [number, ListOptions][] = [];
  return {
    lists,
    list: (options) =>
      defer(() => {
        lists.push([asyncScheduler.now(), options]);
        const result = answer(options);
        return timer(1).pipe(mergeMap(() => (result instanceof InformerError ? throwError(() => result) : [result])));
      }),
    watch: (): Observable<WatchFrame> => timer(3_600_000).pipe(map(() => ({ type: 'BOOKMARK', object: {} }))),
  };
}

function run(fake: ListWatch, untilMs: number): SourceEvent<KubeObject>[] {
  const ts = leakCheckingScheduler(untilMs + 1);
  const events: SourceEvent<KubeObject>[] = [];
  ts.run(() => {
    const subscription = listAndWatch<KubeObject>(fake, { decode: decoder(KubeObject), random: () => 0 }).subscribe((e) => events.push(e));
    ts.schedule(() => subscription.unsubscribe(), untilMs);
  });
  return events;
}

describe('listAndWatch: a list larger than a page', () => {
  it('a whole answer at rv "0" too large: a paged list at rv "" at once, then the replace', () => {
    const fake = server((o) =>
      o.resourceVersion === '0'
        ? tooLarge()
        : o.continue === undefined
          ? { items: [widget], resourceVersion: '10', continue: 'c1' }
          : { items: [widget], resourceVersion: '10' },
    );
    const events = run(fake, 5_000);
    expect(fake.lists).toEqual([
      [0, { resourceVersion: '0', limit: 500, continue: undefined }],
      [1, { resourceVersion: '', limit: 500, continue: undefined }],
      [2, { resourceVersion: undefined, limit: 500, continue: 'c1' }],
    ]);
    expect(events.map((e) => e.type)).toEqual(['error', 'replace', 'watch']);
  });

  it('a page that does not fit: the next list asks for 250 after one backoff step (800 ms), then 125', () => {
    const fake = server((o) =>
      o.resourceVersion === '0' || (o.limit ?? 0) > 125 ? tooLarge() : { items: [widget], resourceVersion: '10' },
    );
    const events = run(fake, 5_000);
    expect(fake.lists).toEqual([
      [0, { resourceVersion: '0', limit: 500, continue: undefined }],
      [1, { resourceVersion: '', limit: 500, continue: undefined }],
      [802, { resourceVersion: '', limit: 250, continue: undefined }],
      [802 + 1 + 1600, { resourceVersion: '', limit: 125, continue: undefined }],
    ]);
    expect(events.filter((e) => e.type === 'replace')).toHaveLength(1);
  });
});
