import type { Observable } from 'rxjs';

export const NOTHING: unique symbol = Symbol('nothing');

/** Subscribes to `get()` and returns what it emitted synchronously, plus whether it completed. */
export function getNow<K>(get: Observable<K>): { value: K | typeof NOTHING; completed: boolean } {
  let value: K | typeof NOTHING = NOTHING;
  let completed = false;
  const subscription = get.subscribe({
    next: (item) => {
      value = item;
    },
    complete: () => {
      completed = true;
    },
  });
  subscription.unsubscribe();
  return { value, completed };
}

/** Takes the next item synchronously or fails. */
export function take<K>(queue: { get(): Observable<K> }): K {
  const { value } = getNow(queue.get());
  if (value === NOTHING) throw new Error('expected an item to be ready');
  return value;
}

/** Returns what `fn` threw, or fails if it did not throw. */
export function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
