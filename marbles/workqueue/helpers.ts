import { filter, map, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { expect } from 'vitest';
import type { WorkEvent } from '../../src/workqueue/index.ts';

export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });
}

/** Keeps the items whose run finished (done or error). */
export function finished<K, R>(events: Observable<WorkEvent<K, R>>): Observable<K> {
  return events.pipe(
    filter((e) => e.type !== 'value'),
    map((e) => e.item),
  );
}
