import { Observable, type Subscriber, type Subscription } from 'rxjs';
import { closedEarly } from './body.ts';
import type { BodyProgress } from './progress.ts';
import type { Opened } from './request.ts';
import { initialListPath, listPathStep, type ListPathInput, type ListPathState } from './listStep.ts';

// The next page of a paged list, asked for as soon as the page before it has told its continue token (docs/transport.md,
// "Paged lists"). client-go's pager asks for page N+1 once page N has been read whole; the token comes first in a page
// (ListMeta, before the items, in JSON and in protobuf), so the wait for page N+1's first bytes (tens of ms from etcd on
// a real apiserver) can overlap page N's decode. The reflector (2-source) knows nothing of it: it asks as before, and a
// `list` with the request held here takes that request instead of opening one.

/** A request opened ahead, as the shell holds it until the reflector asks for it (its decisions: ./listStep.ts). */
interface Slot {
  readonly progress: BodyProgress | undefined;
  subscription: Subscription | undefined;
  /** What came while nobody claimed it: the response (its body unread) or the request's failure. */
  outcome: { readonly opened: Opened } | { readonly error: unknown } | undefined;
  /** The claimer, once claimed while still waiting for the response. */
  waiter: Subscriber<Opened> | undefined;
}

/** What a `list` takes over from a prefetch: the request (its response once it has headers), and its progress rule. */
export interface Claimed {
  readonly opened: Observable<Opened>;
  readonly progress: BodyProgress | undefined;
}

/**
 * One ListWatch's one-slot prefetch: the shell of the list path's step ({@link listPathStep}: which request is held,
 * claimed, aborted), holding the request itself. The rules (each a row of spec/1-transport/listStep.spec.ts, and
 * tested on requests in spec/1-transport/prefetch.spec.ts):
 * - at most one request ahead; its response is not read until claimed (backpressure: the socket's or the HTTP/2
 *   stream's flow control bounds what is buffered);
 * - claimed only by a `list` whose request is the same (path, selectors, limit, token);
 * - aborted when: the page that opened it fails or is unsubscribed before it completed; a `list` of another request or
 *   a `watch` is asked; it is not claimed by the end of the job (microtask) in which its page's subscription ended
 *   (the reflector asks the next page from inside the page's completion). No timer is involved;
 * - a failure of the request is held and handed to the claimer as its own (never retried here).
 */
export class PagePrefetch {
  private state: ListPathState = initialListPath;
  /** The request of `state.held`, when one is held. */
  private slot: Slot | undefined;
  /** Set by a `claim` effect: the slot handed over. */
  private claimed: Slot | undefined;

  /** Opens `request` for `query` ahead, on behalf of page `owner` (one slot: any request held before is aborted). */
  open(owner: object, query: string, request: Observable<Opened>, progress: BodyProgress | undefined): void {
    this.input({ type: 'ahead', owner, query }, request, progress);
  }

  /**
   * The held request when it is `query`'s (it is then the caller's: unsubscribing its `opened` aborts it), else
   * undefined, and the one held (for another request) is aborted.
   */
  claim(query: string): Claimed | undefined {
    this.input({ type: 'ask', query });
    const slot = this.claimed;
    if (slot === undefined) return undefined;
    this.claimed = undefined;
    const opened = new Observable<Opened>((subscriber) => {
      const { outcome } = slot;
      slot.waiter = subscriber; // what comes from now on is the claimer's
      if (outcome !== undefined && 'opened' in outcome) subscriber.next(outcome.opened);
      else if (outcome !== undefined) subscriber.error(outcome.error);
      return () => slot.subscription?.unsubscribe();
    });
    return { opened, progress: slot.progress };
  }

  /**
   * Page `owner`'s subscription ended: a request it opened ahead is aborted now when the page did not complete, else
   * when it is still unclaimed at the end of this job (a microtask: no timer).
   */
  release(owner: object, completed: boolean): void {
    this.input({ type: 'ended', owner, completed });
  }

  /** Aborts the request held, if any (its socket or stream is freed). */
  abort(): void {
    this.input({ type: 'abort' });
  }

  /** One step, and its effects carried out in order; `request` and `progress` are those of an `ahead` input. */
  private input(input: ListPathInput, request?: Observable<Opened>, progress?: BodyProgress): void {
    const { state, effects } = listPathStep(this.state, input);
    this.state = state;
    for (const effect of effects) {
      const slot = this.slot;
      switch (effect.type) {
        case 'claim':
          this.slot = undefined;
          this.claimed = slot;
          break;
        case 'abort':
          this.slot = undefined;
          if (slot !== undefined) end(slot);
          break;
        case 'open': {
          const opened: Slot = { progress, subscription: undefined, outcome: undefined, waiter: undefined };
          this.slot = opened;
          hold(opened, request!);
          break;
        }
        case 'afterJob':
          queueMicrotask(() => this.input({ type: 'jobEnded', slot: effect.slot }));
          break;
      }
    }
  }
}

/** Opens `request` into `slot`: its response (or failure) is held for the claimer, unread. */
function hold(slot: Slot, request: Observable<Opened>): void {
  const subscription = request.subscribe({
    next: (opened) => {
      if (slot.waiter) return slot.waiter.next(opened);
      slot.outcome = { opened };
      // Closed before it was read (a connection cut): its failure, as reading it would have found (body.ts).
      opened.response.on('close', () => {
        if (slot.waiter === undefined && !opened.response.complete) slot.outcome = { error: closedEarly(opened.response, 'list') };
      });
    },
    error: (error: unknown) => (slot.waiter ? slot.waiter.error(error) : (slot.outcome = { error })),
  });
  // A request that failed at once (before `subscribe` returned) holds its failure; nothing is left to abort.
  slot.subscription = subscription;
}

function end(slot: Slot): void {
  slot.subscription?.unsubscribe();
  slot.progress?.stop();
}
