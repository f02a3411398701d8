import { Observable } from 'rxjs';
import { InformerError, describeThrown } from '../0-model/errors.ts';
import { rawKey } from '../0-model/keys.ts';
import type { KeepObject } from '../1-transport/lazyJson.ts';
import type { ListPage, ListWatch, WatchFrame } from '../1-transport/listWatch.ts';

/** A caller's `http.keepObject` that may throw, and the ListWatch wrapper that reports its throws. */
export interface KeepObjectFaults {
  /** The caller's predicate: a throw keeps the object (as the transport does) and is kept to be reported. */
  readonly keep: KeepObject;
  /** `listWatch` with those throws reported: on the next list page (its `notice`) or before the next watch frame. */
  reporting(listWatch: ListWatch): ListWatch;
}

/**
 * A user's `http.keepObject` may throw, as any function of theirs: the object is kept (decoded whole, and the reader
 * decides), and the throw is reported as a `HandlerError` (phase `decode`, the object's key) on the informer's
 * errors$, never swallowed. The transport calls the predicate while it decodes a page or a line, before it hands
 * that page or frame on, so a throw is reported with the page or frame it was met in (a page's throws as one error
 * counting them: a predicate broken for every object says so once a page, not 500 times). A page that already
 * carries a notice leaves them to the next page or frame.
 */
export function keepObjectFaults(keepObject: KeepObject): KeepObjectFaults {
  let first: { key: string | undefined; cause: unknown } | undefined;
  let count = 0;
  const keep: KeepObject = (skeleton) => {
    try {
      return keepObject(skeleton);
    } catch (cause) {
      if (count++ === 0) first = { key: rawKey(skeleton), cause };
      return true;
    }
  };
  const take = (): InformerError | undefined => {
    if (count === 0 || first === undefined) return undefined;
    const { key, cause } = first;
    const more = count > 1 ? ` (and for ${(count - 1).toLocaleString('en-US')} more objects since)` : '';
    const message = `http.keepObject threw for ${key ?? 'an object without a name'}${more}: ${describeThrown(cause)}; kept`;
    first = undefined;
    count = 0;
    return new InformerError('HandlerError', message, { phase: 'decode', cause, ...(key === undefined ? {} : { key }) });
  };
  return {
    keep,
    reporting: (listWatch) => ({
      ...(listWatch.reachable$ ? { reachable$: listWatch.reachable$ } : {}),
      list: (options) =>
        new Observable<ListPage>((subscriber) =>
          listWatch.list(options).subscribe({
            next: (page) => {
              const notice = page.notice === undefined ? take() : undefined;
              subscriber.next(notice === undefined ? page : { ...page, notice });
            },
            error: (error: unknown) => subscriber.error(error),
            complete: () => subscriber.complete(),
          }),
        ),
      watch: (options) =>
        new Observable<WatchFrame>((subscriber) =>
          listWatch.watch(options).subscribe({
            next: (frame) => {
              const thrown = take();
              if (thrown !== undefined) subscriber.next(thrown);
              subscriber.next(frame);
            },
            error: (error: unknown) => subscriber.error(error),
            complete: () => subscriber.complete(),
          }),
        ),
    }),
  };
}
