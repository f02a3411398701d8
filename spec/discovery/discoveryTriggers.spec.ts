/**
 * When the dynamic factory discovers again (src/discovery/discoveryTriggers.ts), at default options, in virtual time
 * (TestScheduler, 1 frame = 1 ms): audit20 found a whole discovery round after every CRD update (an annotation too),
 * and a debounce that changes coming faster than 250 ms held back for as long as they came.
 */
import { Subject, interval, map, take, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { PartialObjectMetadata } from '../../src/0-model/metadata.ts';
import type { InformerEvent } from '../../src/4-store/informerEvent.ts';
import { CRD_UPDATE_INTERVAL_MS, DISCOVERY_DEBOUNCE_MS, discoveryTriggers } from '../../src/discovery/discoveryTriggers.ts';

type Event = InformerEvent<PartialObjectMetadata>;

const crd = (name: string, generation: number | undefined, resourceVersion: string): PartialObjectMetadata => ({
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  metadata: { name, resourceVersion, ...(generation === undefined ? {} : { generation }) },
});
const created = (name: string): Event => ({ type: 'added', object: crd(name, 1, '1'), isInInitialList: false });
const deleted = (name: string): Event => ({ type: 'deleted', object: crd(name, 1, '9'), finalStateUnknown: false, isInInitialList: false });
/** An update from generation `from` to `to` (the same: metadata or status only). */
const updated = (name: string, from: number | undefined, to: number | undefined, rv: number, resync = false): Event => ({
  type: 'updated',
  oldObject: crd(name, from, String(rv - 1)),
  object: crd(name, to, String(resync ? rv - 1 : rv)),
  isInInitialList: false,
  resync,
});

/** The times (ms) discovery would start, given the CRD events and pokes the scenario sends; Pears is served. */
function triggerTimes(scenario: (events: Subject<Event>, pokes: Subject<void>) => Observable<unknown>, endMs = 60_000): number[] {
  const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  const times: number[] = [];
  scheduler.run(({ cold }) => {
    const events = new Subject<Event>();
    const pokes = new Subject<void>();
    const served = (name: string) => name === 'pears.fruit.example.com';
    discoveryTriggers(events, pokes, served, {}, scheduler).subscribe(() => times.push(scheduler.now()));
    scenario(events, pokes).subscribe();
    cold(`${endMs}ms |`).subscribe(
      () => undefined,
      undefined,
      () => events.complete(),
    );
  });
  return times;
}

/** `what(i)` at `everyMs`, 2 × `everyMs`, …, `count` times. */
const every = (everyMs: number, count: number, what: (i: number) => void) => interval(everyMs).pipe(take(count), map(what));

describe('discoveryTriggers (default options)', () => {
  it(`a CRD created or deleted, or a poke: discovery ${DISCOVERY_DEBOUNCE_MS} ms after the last of a burst`, () => {
    expect([DISCOVERY_DEBOUNCE_MS, CRD_UPDATE_INTERVAL_MS]).toEqual([250, 5_000]);
    const times = triggerTimes((events, pokes) =>
      every(100, 3, (i) => {
        if (i === 0) events.next(created('myapples.stable.example.com'));
        if (i === 1) events.next(deleted('kiwis.fruit.example.com'));
        if (i === 2) pokes.next();
      }),
    );
    expect(times).toEqual([300 + 250]);
  });

  it('updates that keep the generation of a served CRD (annotations, labels, status), and resyncs: no discovery at all', () => {
    const times = triggerTimes((events) =>
      every(400, 50, (i) => {
        events.next(updated('pears.fruit.example.com', 3, 3, 10 + i));
        events.next(updated('kiwis.fruit.example.com', 2, 2, 100 + i, true));
      }),
    );
    expect(times).toEqual([]);
  });

  it('a spec change (the generation moves): discovery 250 ms later; a steady stream of them: one every 5 s', () => {
    expect(triggerTimes((events) => every(1000, 1, () => events.next(updated('pears.fruit.example.com', 3, 4, 20))))).toEqual([1000 + 250]);
    // A spec change every 50 ms for 12 s (a conversion webhook's caBundle rewritten, say): 240 updates, 4 discoveries.
    const times = triggerTimes((events) => every(50, 240, (i) => events.next(updated('pears.fruit.example.com', i + 1, i + 2, 20 + i))));
    expect(times).toEqual([50 + 250, 5_050 + 250, 10_050 + 250, 15_050 + 250]);
  });

  it('a CRD not served yet (being established): its status updates count, rate-limited; a server without generations: all count', () => {
    const times = triggerTimes((events) =>
      every(1000, 2, (i) =>
        events.next(
          updated(
            i === 0 ? 'limes.fruit.example.com' : 'pears.fruit.example.com',
            i === 0 ? 1 : undefined,
            i === 0 ? 1 : undefined,
            30 + i,
          ),
        ),
      ),
    );
    expect(times).toEqual([1000 + 250, 5_000 + 1000 + 250]);
  });

  it('a CRD created while another changes every 50 ms is discovered within 250 ms', () => {
    const times = triggerTimes((events) =>
      every(50, 60, (i) => {
        events.next(updated('pears.fruit.example.com', 3, 3, 40 + i)); // annotations
        if (i === 20) events.next(created('myapples.stable.example.com')); // at 1,050 ms
      }),
    );
    expect(times).toEqual([1050 + 250]);
  });

  it('CRDs created every 100 ms for 3 s (an operator installing its CRDs): a discovery at most 1 s after the first waiting, and 250 ms after the last', () => {
    const times = triggerTimes((events) => every(100, 30, (i) => events.next(created(`c${i}.example.com`))));
    expect(times).toEqual([100 + 1000, 1200 + 1000, 3000 + 250]);
  });
});
