import { EMPTY, ReplaySubject } from 'rxjs';
import { describe, it } from 'vitest';
import { createDelayingQueue } from '../../src/workqueue/index.ts';
import { finished, testScheduler } from './helpers.ts';

describe('addAfter in virtual time', () => {
  it('a duplicate pending add keeps the earliest time', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createDelayingQueue<string>({ scheduler: ts });
      expectObservable(finished(q.process(() => EMPTY))).toBe('25ms a 4ms b');
      q.addAfter('a', 50);
      q.addAfter('b', 30);
      ts.schedule(() => q.addAfter('a', 20), 5); // ready at 25, earlier than 50
      ts.schedule(() => q.addAfter('a', 100), 10); // later: ignored
    });
  });

  it('a delay <= 0 adds now', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createDelayingQueue<string>({ scheduler: ts });
      expectObservable(finished(q.process(() => EMPTY))).toBe('3ms (ab)');
      ts.schedule(() => {
        q.addAfter('a', 0);
        q.addAfter('b', -1);
      }, 3);
    });
  });

  it('shutdown drops items still waiting', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createDelayingQueue<string>({ scheduler: ts });
      const drained = new ReplaySubject<void>();
      expectObservable(finished(q.process(() => EMPTY))).toBe('10ms a 9ms |');
      q.addAfter('a', 10);
      q.addAfter('b', 30);
      ts.schedule(() => q.shutDownWithDrain().subscribe(drained), 20);
      expectObservable(drained).toBe('20ms (x|)', { x: undefined });
    });
  });
});
