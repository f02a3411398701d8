import { describe, expect, it } from 'vitest';
import { Observable, Subject, Subscription } from 'rxjs';
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
