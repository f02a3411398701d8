import { Observable, type Subscriber, type Subscription } from 'rxjs';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';

interface Member<T> {
  readonly subscriber: Subscriber<InformerEvent<T>>;
  /** Joined with the connection; its first state is its snapshot. */
  fresh: boolean;
}

/**
 * The informer's `events$`: every subscriber shares one subscription to the
 * state stream, and each step's events are handed to each of them in turn.
 * A subscriber first receives the cache as it stands, as `added` events with
 * `isInInitialList: true`, then the events of every later step: no gap, no
 * duplicate, also for one that joins while a step is being delivered (the
 * snapshot already holds that step). The last unsubscribe ends the shared
 * subscription.
 *
 * ```
 * state$:   S0-------S1(e1,e2)------S2(e3)----
 * sharedEvents(state$)
 * first:    ^[S0]----e1e2-----------e3--------
 * late:                       ^[S1]-e3--------
 *           [S]: the store of S as added events
 * ```
 */
export function sharedEvents<T>(state$: Observable<InformerState<T>>): Observable<InformerEvent<T>> {
  /** Replaced, never changed in place, so a delivery in progress keeps the list it started with. */
  let members: readonly Member<T>[] = [];
  let connection: Subscription | undefined;
  let connecting = false;
  let latest: InformerState<T> | undefined;

  const snapshot = (subscriber: Subscriber<InformerEvent<T>>, state: InformerState<T>) => {
    for (const [, object] of state.store.entries()) {
      if (subscriber.closed) return;
      subscriber.next({ type: 'added', object, isInInitialList: true });
    }
  };
  const end = (signal: (subscriber: Subscriber<InformerEvent<T>>) => void) => {
    const all = members;
    members = [];
    connection = undefined;
    latest = undefined;
    for (const member of all) signal(member.subscriber);
  };

  const upstream = {
    next: (state: InformerState<T>) => {
      latest = state;
      const list = members;
      let fresh = false;
      for (const member of list) {
        if (!member.fresh) continue;
        fresh = true;
        snapshot(member.subscriber, state);
      }
      const events = state.events;
      for (let e = 0; e < events.length; e++) {
        for (let m = 0; m < list.length; m++) if (!list[m]!.fresh) list[m]!.subscriber.next(events[e]!);
      }
      if (fresh) for (const member of list) member.fresh = false;
    },
    error: (error: unknown) => end((subscriber) => subscriber.error(error)),
    complete: () => end((subscriber) => subscriber.complete()),
  };

  return new Observable<InformerEvent<T>>((subscriber) => {
    if (latest) {
      // Joining a running informer: the cache as it stands, then live events.
      const member: Member<T> = { subscriber, fresh: false };
      snapshot(subscriber, latest);
      members = [...members, member];
      return () => leave(member);
    }
    // Not connected yet (or connecting): the first state to come is this member's snapshot.
    const member: Member<T> = { subscriber, fresh: true };
    members = [...members, member];
    if (!connecting && !connection) {
      connecting = true;
      const opened = state$.subscribe(upstream);
      connecting = false;
      // A state stream that ended during the subscribe has ended every member: the next subscriber connects afresh.
      if (members.length === 0) opened.unsubscribe();
      else connection = opened;
    }
    return () => leave(member);
  });

  function leave(member: Member<T>): void {
    if (!members.includes(member)) return;
    members = members.filter((m) => m !== member);
    if (members.length > 0) return;
    const closing = connection;
    connection = undefined;
    latest = undefined;
    closing?.unsubscribe();
  }
}
