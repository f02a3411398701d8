import { BehaviorSubject, combineLatest, map, of, switchMap, type Observable } from 'rxjs';
import type { Informer, KubeObject } from '../index.ts';
import type { InformerHealth } from '../metrics/index.ts';

/**
 * The informers the watch command has attached now, as `serve()` serves them: `/readyz` and `/metrics` follow
 * what is watched. A resource the command gave up on (`! not watching …`) or stopped watching is detached and
 * leaves them, and an informer nobody watches is not served (the dynamic factory's own CustomResourceDefinition
 * watch: its failures are reported on stderr, and it never holds readiness back).
 */
export class ServedInformers {
  private readonly attached = new Map<number, Informer<KubeObject>>();
  private readonly changed = new BehaviorSubject<void>(undefined);

  /** Every attached informer's health, whenever one changes and whenever the set changes. */
  readonly health$: Observable<readonly InformerHealth[]> = this.changed.pipe(
    map(() => this.informers()),
    switchMap((informers) => (informers.length === 0 ? of([]) : combineLatest(informers.map((i) => i.health$)))),
  );

  readonly informers = (): readonly Informer<KubeObject>[] => [...this.attached.values()];

  /** A resource's informer is watched (in place of its predecessor's, for the same id). */
  attach(id: number, informer: Informer<KubeObject>): void {
    if (this.attached.get(id) === informer) return;
    this.attached.set(id, informer);
    this.changed.next();
  }

  detach(id: number): void {
    if (this.attached.delete(id)) this.changed.next();
  }
}
