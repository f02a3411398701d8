/**
 * Keys whose reconcile returned a promise that has not settled yet. Unsubscribing cannot stop a promise: an abandoned
 * reconcile (leadership lost, `outcomes$` unsubscribed) runs on until it settles, so its key stays in flight until
 * then (its `queue.done` waits), or the key would start again beside it (client-go's queue never hands out a key
 * still processing; neither does this controller while the user's code still runs on it).
 */
export class SettlingKeys {
  private readonly pending = new Map<string, (() => void)[]>();

  /**
   * `value` as a promise that settles after the key has left the pending set, so that the reconcile's own outcome
   * (which follows) finds it gone.
   */
  track<R>(key: string, value: PromiseLike<R>): Promise<R> {
    const after: (() => void)[] = [];
    this.pending.set(key, after);
    const settled = () => {
      if (this.pending.get(key) === after) this.pending.delete(key);
      for (const then of after) then();
    };
    return Promise.resolve(value).then(
      (result) => {
        settled();
        return result;
      },
      (error: unknown) => {
        settled();
        throw error;
      },
    );
  }

  /** Runs `then` now, or once the key's promise has settled. */
  afterSettled(key: string, then: () => void): void {
    const after = this.pending.get(key);
    if (after) after.push(then);
    else then();
  }
}
