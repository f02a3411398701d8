import { filter, map, type Observable } from 'rxjs';
import type { WorkEvent } from '../../src/workqueue/index.ts';

export { testScheduler } from '../support/testScheduler.ts';

/** Keeps the items whose run finished (done or error). */
export function finished<K, R>(events: Observable<WorkEvent<K, R>>): Observable<K> {
  return events.pipe(
    filter((e) => e.type !== 'value'),
    map((e) => e.item),
  );
}
