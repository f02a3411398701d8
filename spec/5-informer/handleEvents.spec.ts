import { describe, expect, it, vi } from 'vitest';
import { Observable, Subject, Subscription, from, lastValueFrom, toArray } from 'rxjs';
import { handleEvents, type InformerEvent, type KubeObject } from '../../src/index.ts';

describe('handleEvents: a handler that unsubscribes its own subscription', () => {
  it('gets no further call, and the work it started is unsubscribed', () => {
    const source = new Subject<InformerEvent<KubeObject>>();
    const calls: string[] = [];
    let running = 0;
    let subscription = new Subscription();
    subscription = source
      .pipe(
        handleEvents<KubeObject>((event) => {
          calls.push(event.object.metadata.name);
          subscription.unsubscribe();
          return new Observable<void>(() => {
            running++;
            return () => running--;
          });
        }),
      )
      .subscribe();
    for (const name of ['a', 'b', 'c'])
      source.next({ type: 'added', object: { metadata: { name, namespace: 'ns' } }, isInInitialList: false });
    expect(calls).toEqual(['a']);
    expect(running).toBe(0);
    expect(source.observed).toBe(false);
  });
});

describe('handleEvents: what a handler returns', () => {
  const events = (...names: string[]): InformerEvent<KubeObject>[] =>
    names.map((name) => ({ type: 'added', object: { metadata: { name, namespace: 'ns' } }, isInInitialList: false }));
  /** The HandlerErrors' messages, once every event has been handled (the output completes after the backlog). */
  const run = (handler: Parameters<typeof handleEvents<KubeObject>>[0], ...names: string[]) =>
    lastValueFrom(from(events(...names)).pipe(handleEvents<KubeObject>(handler), toArray())).then((errors) => errors.map((e) => e.message));

  it('an async function* handler: its body runs to its end for each event, one event at a time; what it throws is a HandlerError', async () => {
    const steps: string[] = [];
    const errors = await run(
      async function* (event) {
        const name = event.object.metadata.name;
        steps.push(`start ${name}`);
        yield await Promise.resolve(name);
        if (name === 'b') throw new Error('boom');
        steps.push(`end ${name}`);
      },
      'a',
      'b',
      'c',
    );
    expect(steps).toEqual(['start a', 'end a', 'start b', 'start c', 'end c']);
    expect(errors).toEqual(['the added handler threw for ns/b: boom']);
  });

  it('a function* handler: its body runs for each event; what it throws is a HandlerError', async () => {
    const steps: string[] = [];
    const errors = await run(
      function* (event) {
        const name = event.object.metadata.name;
        steps.push(name);
        yield name;
        if (name === 'a') throw new Error('boom');
      },
      'a',
      'b',
    );
    expect(steps).toEqual(['a', 'b']);
    expect(errors).toEqual(['the added handler threw for ns/a: boom']);
  });

  it('an array, a Map or another iterable returned is a value: not iterated, nothing waited for', async () => {
    let iterated = 0;
    const iterable: Iterable<number> = {
      [Symbol.iterator]: () => {
        iterated++;
        return [1, 2][Symbol.iterator]();
      },
    };
    const cache = new Map<string, KubeObject>();
    cache.set('x', { metadata: { name: 'x' } });
    const spy = vi.spyOn(cache, Symbol.iterator);
    const errors = await run(
      (event) => (event.object.metadata.name === 'a' ? iterable : cache.set(event.object.metadata.name, event.object)),
      'a',
      'b',
    );
    expect([iterated, spy.mock.calls.length, errors]).toEqual([0, 0, []]);
  });
});
