/** An object appeared in the cache. */
export interface AddedEvent<T> {
  readonly type: 'added';
  readonly object: T;
  /** True for objects delivered as part of the initial list (or, for a late subscriber, the cache as it stood). */
  readonly isInInitialList: boolean;
}

/** A cached object changed (or was re-delivered by a resync or relist). */
export interface UpdatedEvent<T> {
  readonly type: 'updated';
  readonly oldObject: T;
  readonly object: T;
  readonly isInInitialList: boolean;
  /**
   * True for a resync tick, and for any update whose object has the same
   * resourceVersion as the cached one (a relist that found it unchanged, or a
   * watch event that repeats it): client-go's `isSync`, which compares the two
   * resourceVersions whatever the delta type. Objects without a resourceVersion
   * never match.
   */
  readonly resync: boolean;
}

/** An object left the cache. */
export interface DeletedEvent<T> {
  readonly type: 'deleted';
  /** The object's last state: from the DELETED event, or the last cached state when the deletion was missed. */
  readonly object: T;
  /**
   * True when the deletion was missed while the watch was down and noticed by
   * a relist: `object` is then the last state the cache had (client-go wraps
   * it in `DeletedFinalStateUnknown`).
   */
  readonly finalStateUnknown: boolean;
  readonly isInInitialList: boolean;
  /**
   * True when the object left a sharded informer's cache because its shard moved to another
   * replica: it was not deleted from the server (a controller does not act on it).
   */
  readonly shardMoved?: boolean;
}

/** What an informer tells its subscribers, in order. */
export type InformerEvent<T> = AddedEvent<T> | UpdatedEvent<T> | DeletedEvent<T>;

export type InformerEventType = InformerEvent<unknown>['type'];
