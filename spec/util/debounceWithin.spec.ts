/** debounceWithin (src/util/debounceWithin.ts): a debounce that a steady stream cannot hold back past its longest wait. */
import { debounceTime } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { debounceWithin } from '../../src/util/debounceWithin.ts';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('debounceWithin', () => {
  it('emits the last value after a quiet spell, as debounceTime does', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('a 9ms b-c 9ms d|');
      expectObservable(e1.pipe(debounceWithin(3, 7))).toBe('--- a 11ms c 7ms (d|)');
      expectSubscriptions(e1.subscriptions).toBe('^ 22ms !');
    });
  });

  it('a value every 2 frames: debounceTime waits for the end; debounceWithin emits every 7 frames', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = 'a-b-c-d-e-f-g-h-i-j-k|';
      expectObservable(cold(source).pipe(debounceTime(3))).toBe('---------------------(k|)');
      expectObservable(cold(source).pipe(debounceWithin(3, 7))).toBe('-------d-------h-----(k|)');
    });
  });

  it('a longest wait shorter than the quiet time is the quiet time', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-b-c-d|').pipe(debounceWithin(3, 1))).toBe('---b---(d|)');
    });
  });

  it('passes errors on, and unsubscribes the source and its timer', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('a-b-#');
      expectObservable(e1.pipe(debounceWithin(3, 7))).toBe('----#');
      expectSubscriptions(e1.subscriptions).toBe('^---!');
      const e2 = cold('a-b-c-d-e');
      expectObservable(e2.pipe(debounceWithin(3, 7)), '^--!').toBe('---');
      expectSubscriptions(e2.subscriptions).toBe('^--!');
    });
  });
});
