import { Observable } from 'rxjs';

/**
 * `source`, while holding `kept` subscribed: a replayed stream keeps its latest value for later subscribers,
 * and an informer keeps running while only something derived from it is watched.
 */
export function keeping<T>(kept: Observable<unknown>, source: Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const keep = kept.subscribe();
    keep.add(source.subscribe(subscriber));
    return keep;
  });
}

/** Whether two sets hold the same members. */
export function sameSet<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}
