import { isObservable, type ObservableInput } from 'rxjs';

/** rxjs's interop key (`Symbol.observable` where defined). */
const OBSERVABLE_KEY: PropertyKey = (Symbol as { readonly observable?: symbol }).observable ?? '@@observable';

/**
 * Whether a user function's result (an `on()` handler's, a reconcile's) is work to run and wait for: every
 * `ObservableInput` `from()` runs asynchronously or whose iteration is the function's body (an Observable or interop
 * one, a promise, an async iterable, a ReadableStream, a generator), each through `from()`: an `async function*`'s
 * body runs only when iterated, so it was never run. An array, a Map, a Set (an arrow function's `map.set(k, v)`
 * returns its map) or a string is a value returned, not iterated: nothing to wait for, and iterating it would cost its
 * size at every call.
 */
export function isWork(result: unknown): result is ObservableInput<unknown> {
  if (result === null || (typeof result !== 'object' && typeof result !== 'function')) return false;
  if (isObservable(result)) return true;
  const r = result as Record<PropertyKey, unknown>;
  return (
    typeof r['then'] === 'function' ||
    typeof r[Symbol.asyncIterator] === 'function' ||
    typeof r[OBSERVABLE_KEY] === 'function' ||
    typeof r['getReader'] === 'function' ||
    Object.prototype.toString.call(result) === '[object Generator]'
  );
}

/** Whether a result is an async iterable (an `async function*`'s, a ReadableStream) and not an Observable. */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !isObservable(value) &&
    typeof (value as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function'
  );
}
