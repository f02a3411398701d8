import { BehaviorSubject, combineLatest, map, of, switchMap, type Observable } from 'rxjs';
import type { Informer, InformerHealth, KubeObject } from '../index.ts';

/**
 * The resources the watch command watches now, as a Set that `serve()` can serve: `/readyz` and `/metrics` follow
 * what is watched. A resource the command gave up on (`! not watching …`) or stopped watching leaves them, and so
 * does an informer nobody else runs (the dynamic factory's own CustomResourceDefinition watch is not served:
 * its failures are reported on stderr, and it never holds readiness back).
 */
export class ServedSet<W extends { readonly informer: Informer<KubeObject> }> extends Set<W> {
  private readonly changed = new BehaviorSubject<void>(undefined);

  /** Every watched resource's health, whenever one changes and whenever the set changes. */
  readonly health$: Observable<readonly InformerHealth[]> = this.changed.pipe(
    map(() => this.informers()),
    switchMap((informers) => (informers.length === 0 ? of([]) : combineLatest(informers.map((i) => i.health$)))),
  );

  readonly informers = (): readonly Informer<KubeObject>[] => [...this].map((w) => w.informer);

  override add(w: W): this {
    super.add(w);
    this.changed?.next();
    return this;
  }

  override delete(w: W): boolean {
    const had = super.delete(w);
    if (had) this.changed.next();
    return had;
  }

  /** A member's informer was replaced (a dynamic watch handed over a new one). */
  touch(): void {
    this.changed.next();
  }
}
