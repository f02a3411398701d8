import type { InformerError } from '../0-model/errors.ts';

/**
 * What the source (list + watch) emits, in order. Everything downstream is a
 * function of this stream, so a test can feed it from marbles.
 *
 * - `replace`: a complete list (or the initial events of a watch-list) with its resourceVersion.
 *   `rejectedKeys` are keys the list had whose objects failed validation (reported as
 *   errors already): they exist on the server, so they are never taken for missing.
 * - `added` / `modified` / `deleted`: one watch event, object validated.
 * - `deletedKey`: a DELETED watch event whose object failed validation: the key is gone
 *   from the server all the same (its last cached state is what was deleted).
 * - `bookmark`: the server's resourceVersion moved on; nothing to cache.
 * - `watch`: a watch request is being opened from this resourceVersion (for metrics; nothing to cache).
 * - `error`: a fault, reported and survived (the source keeps going).
 * - `resync`: inserted by the `resync` operator, not by the source.
 */
export type SourceEvent<T> =
  | { readonly type: 'replace'; readonly items: readonly T[]; readonly resourceVersion: string; readonly rejectedKeys?: readonly string[] }
  | { readonly type: 'added' | 'modified' | 'deleted'; readonly object: T; readonly resourceVersion: string }
  | { readonly type: 'deletedKey'; readonly key: string; readonly resourceVersion: string }
  | { readonly type: 'bookmark'; readonly resourceVersion: string }
  | { readonly type: 'watch'; readonly resourceVersion: string }
  | { readonly type: 'error'; readonly error: InformerError }
  | { readonly type: 'resync' };

/** A paged list that is not complete yet: pages and objects received so far (see `onListProgress`). */
export interface ListProgress {
  readonly pages: number;
  readonly objects: number;
}

export type WatchEventType = 'added' | 'modified' | 'deleted';
