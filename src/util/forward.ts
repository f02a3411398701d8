import type { Observer, Subscriber } from 'rxjs';

/**
 * An observer for an operator's inner subscription that passes error and
 * complete on to `subscriber` and hands each value to `next` (by default: on
 * to `subscriber` as well). `complete`, when given, runs instead of
 * completing `subscriber`.
 */
export function forward<T>(subscriber: Subscriber<T>): Observer<T>;
export function forward<T, R>(subscriber: Subscriber<R>, next: (value: T) => void, complete?: () => void): Observer<T>;
export function forward<T, R>(subscriber: Subscriber<R>, next?: (value: T) => void, complete?: () => void): Observer<T> {
  return {
    next: next ?? ((value) => subscriber.next(value as unknown as R)),
    error: (error: unknown) => subscriber.error(error),
    complete: complete ?? (() => subscriber.complete()),
  };
}
