import { describe, expect, it } from 'vitest';
import { firstValueFrom, of, toArray } from 'rxjs';
import { InformerError } from '../../src/0-model/errors.ts';
import { isSkipped, lazyParseWatchLine } from '../../src/1-transport/lazyJson.ts';
import { lazyParseList } from '../../src/1-transport/lazyList.ts';
import type { ListWatch, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { filtered } from '../../src/1-transport/listWatch.ts';
import { listPage, watchEvent } from '../../src/testing/index.ts';

const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', resourceVersion: '7', managedFields: [{ manager: 'kubectl', operation: 'Update' }] },
  spec: { containers: [{ name: 'c' }] },
  status: { phase: 'Running' },
});
const keepA = (skeleton: { metadata: Readonly<Record<string, unknown>> }) => skeleton.metadata['name'] === 'a';

describe('lazy decoding with a keep predicate', () => {
  it('a rejected list item comes out as its metadata only, marked skipped; the others whole', () => {
    const list = lazyParseList(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '9' }, items: [pod('a'), pod('b')] }), keepA);
    const [a, b] = list['items'] as Record<string, unknown>[];
    expect(isSkipped(a)).toBe(false);
    expect(JSON.parse(JSON.stringify(a))).toEqual(pod('a'));
    expect(isSkipped(b)).toBe(true);
    expect(Object.keys(b!)).toEqual(['metadata']);
    expect((b!['metadata'] as { name: string }).name).toBe('b');
    expect(JSON.parse(JSON.stringify(list['metadata']))).toEqual({ resourceVersion: '9' });
  });

  it('a rejected watch object likewise; a keep that throws keeps the object', () => {
    const line = JSON.stringify({ type: 'MODIFIED', object: pod('b') });
    const dropped = lazyParseWatchLine(line, keepA);
    expect(dropped.type).toBe('MODIFIED');
    expect(isSkipped(dropped.object)).toBe(true);
    const kept = lazyParseWatchLine(line, () => {
      throw new Error('boom');
    });
    expect(isSkipped(kept.object)).toBe(false);
    expect(JSON.parse(JSON.stringify(kept.object))).toEqual(pod('b'));
  });

  it('the rest of a rejected object is still followed for its structure (a broken one is rejected)', () => {
    expect(() => lazyParseWatchLine('{"type":"ADDED","object":{"metadata":{"name":"b"},"spec":{"x":[1,2}}}', keepA)).toThrow();
  });
});

describe('filtered ListWatch', () => {
  const inner: ListWatch = {
    list: () => of(listPage('9', [pod('a'), pod('b'), { metadata: { name: 'c', namespace: 'ns' } }])),
    watch: () =>
      of<WatchFrame[]>(
        watchEvent('ADDED', pod('b')),
        watchEvent('DELETED', pod('a')),
        watchEvent('ERROR', { kind: 'Status', code: 410 }),
        new InformerError('MalformedLine', 'bad line', { phase: 'watch' }),
      ),
  };
  const wants = (key: string | undefined) => key !== 'ns/b';

  it('leaves out list items of keys not wanted, and skeletons', async () => {
    const skeleton = lazyParseList(JSON.stringify({ metadata: { resourceVersion: '9' }, items: [pod('d')] }), () => false)[
      'items'
    ] as unknown[];
    const lw = filtered({ ...inner, list: () => of(listPage('9', [pod('a'), pod('b'), ...skeleton])) }, wants);
    const page = await firstValueFrom(lw.list({}));
    expect(page.items.map((i) => (i as { metadata: { name: string } }).metadata.name)).toEqual(['a']);
    expect(page.resourceVersion).toBe('9');
  });

  it('turns watch events of keys not wanted into bookmarks at their resourceVersion; everything else passes', async () => {
    const frames = await firstValueFrom(filtered(inner, wants).watch({}).pipe(toArray()));
    expect(frames[0]).toEqual({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } });
    expect(frames.slice(1, 3).map((f) => (f instanceof InformerError ? f.reason : f.type))).toEqual(['DELETED', 'ERROR']);
    expect(frames[3]).toBeInstanceOf(InformerError);
  });
});
