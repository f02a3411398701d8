/**
 * The reflector's `step` where client-go's reflector.go (kubernetes/client-go 32ce75a7, the code paths of v0.35) decides
 * otherwise than we once did (a review, audit36): each test names the client-go lines it follows, and reads the
 * requests `step` asks for, in order. Pure: virtual time is the machine's own clock; default options.
 */
import { describe, expect, it } from 'vitest';
import { InformerError, errorFromStatus } from '../../src/0-model/errors.ts';
import { KubeObject } from '../../src/0-model/objects.ts';
import type { ListPage, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { decoder } from '../../src/2-source/decode.ts';
import { reflectorConfig, type ListAndWatchOptions } from '../../src/2-source/listAndWatch.ts';
import { describeState, initialReflectorState, type ReflectorInput, type ReflectorState } from '../../src/2-source/reflectorState.ts';
import { step } from '../../src/2-source/step.ts';
import { event, obj, status, tooLarge } from './reflectorFixtures.ts';

type Obj = KubeObject;
type Omitted = ReflectorInput extends infer I ? (I extends { id: number } ? Omit<I, 'id'> : I) : never;
const page = (rv: string, items: Obj[], continueToken?: string): ListPage => ({
  items,
  resourceVersion: rv,
  ...(continueToken ? { continue: continueToken } : {}),
});

/** Drives `step` as the shell does, and logs each request and wait it asks for in one line. */
class Machine {
  state: ReflectorState<Obj>;
  now = 0;
  readonly log: string[] = [];
  private readonly config;

  constructor(options: Partial<ListAndWatchOptions<Obj>> = {}) {
    this.config = reflectorConfig<Obj>({ decode: decoder(KubeObject), ...options });
    this.state = initialReflectorState<Obj>(options.watchList ?? false);
  }

  send(input: Omitted, afterMs = 0): this {
    this.now += afterMs;
    const full = (input.type === 'start' ? input : { ...input, id: this.state.request }) as ReflectorInput;
    const { state, effects: first } = step(this.config, this.state, full, this.now);
    this.state = state;
    const effects = [...first];
    // As the shell: a backoff's jitter is drawn and input at once.
    const draw = first.find((e) => e.type === 'drawBackoff');
    if (draw) {
      const drawn = step(this.config, this.state, { type: 'backoffDrawn', id: draw.id, random: 0 }, this.now);
      this.state = drawn.state;
      effects.push(...drawn.effects);
    }
    for (const e of effects) {
      if (e.type === 'list') {
        const { resourceVersion, limit, continue: token } = e.options;
        this.log.push(token ? `list continue limit=${limit ?? '-'}` : `list rv=${JSON.stringify(resourceVersion)} limit=${limit ?? '-'}`);
      }
      if (e.type === 'watch') {
        this.log.push(`watch rv=${JSON.stringify(e.options.resourceVersion)}${e.options.sendInitialEvents ? ' sendInitialEvents' : ''}`);
      }
      if (e.type === 'wait') this.log.push(e.backoff ? 'backoff' : 'at once');
    }
    return this;
  }

  listed(p: ListPage): this {
    return this.send({ type: 'listed', page: p });
  }

  listFailed(error: InformerError, afterMs = 0): this {
    return this.send({ type: 'listFailed', error }, afterMs);
  }

  frame(frame: WatchFrame, afterMs = 10): this {
    return this.send({ type: 'frame', frame }, afterMs);
  }

  /** The wait's timer fires; a watch about to open gets its timeout. */
  timer(): this {
    this.send({ type: 'timer' }, 1);
    return this.opened();
  }

  /** A watch about to open gets its timeout (nothing otherwise). */
  opened(): this {
    return this.state.phase.name === 'opening' ? this.send({ type: 'timeoutPicked', timeoutSeconds: 300 }) : this;
  }

  /** The log from entry `from` on. */
  since(from: number): string[] {
    return this.log.slice(from);
  }
}

const expired = (phase: 'list' | 'watch') => errorFromStatus(410, status(410, 'Expired'), phase);
const tooLargeList = () => errorFromStatus(504, tooLarge, 'list');
/** A 200 whose body passed `maxListBytes` (the transport's `ResponseTooLarge`). */
const didNotFit = () =>
  new InformerError('ResponseTooLarge', 'the response is larger than the 256 MiB limit', { status: 200, phase: 'list' });
const network = () => new InformerError('NetworkError', 'socket hang up');

describe('a watch answered 504 "Too large resource version" (client-go reflector.go watch() :645-670, list() :720-728)', () => {
  it('backs off, then lists at its last resourceVersion unpaged (the watch cache); no list at "" while the lists are answered', () => {
    const m = new Machine()
      .send({ type: 'start' })
      .listed(page('10', [obj('a', '5')]))
      .opened();
    const from = m.log.length;
    // A lagging server: each relist is answered, the watch from its resourceVersion is ahead of the watch cache.
    for (let lap = 0; lap < 3; lap++)
      m.frame(event('ERROR', tooLarge), 3_000)
        .timer()
        .listed(page('20', [obj('a', '5')]))
        .opened();
    expect(m.since(from), describeState(m.state)).toEqual([
      ...['backoff', 'list rv="10" limit=-', 'watch rv="20"'],
      ...['backoff', 'list rv="20" limit=-', 'watch rv="20"'],
      ...['backoff', 'list rv="20" limit=-', 'watch rv="20"'],
    ]);
  });

  it('only a 504 on that list lists at "" (at once, paged as any list at "")', () => {
    const m = new Machine()
      .send({ type: 'start' })
      .listed(page('10', [obj('a', '5')]))
      .opened();
    const from = m.log.length;
    m.frame(event('ERROR', tooLarge), 3_000).timer().listFailed(tooLargeList(), 3_000).timer().listed(page('20', [])).opened();
    expect(m.since(from), describeState(m.state)).toEqual([
      'backoff',
      'list rv="10" limit=-',
      'at once',
      'list rv="" limit=500',
      'watch rv="20"',
    ]);
  });

  it('a streaming list answered 504 streams again at once at "" (client-go watchList(): the RV made unavailable)', () => {
    const end = event('BOOKMARK', { metadata: { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } } });
    const m = new Machine({ watchList: true }).send({ type: 'start' }).opened().frame(end);
    m.frame(event('ERROR', status(403, 'Forbidden')), 3_000).timer();
    const from = m.log.length;
    m.frame(event('ERROR', tooLarge), 3_000).timer();
    expect(m.since(from), describeState(m.state)).toEqual(['at once', 'watch rv="" sendInitialEvents']);
  });

  it('with watchList, the relist after the backoff streams from the last resourceVersion', () => {
    const end = event('BOOKMARK', { metadata: { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } } });
    const m = new Machine({ watchList: true })
      .send({ type: 'start' })
      .opened()
      .frame(event('ADDED', obj('a', '5')))
      .frame(end);
    const from = m.log.length;
    m.frame(event('ERROR', tooLarge), 3_000).timer();
    expect(m.since(from), describeState(m.state)).toEqual(['backoff', 'watch rv="10" sendInitialEvents']);
  });
});

describe('after a whole rv-0 answer did not fit (client-go list() :694-712: a relist at a specific resourceVersion is unpaged)', () => {
  /** The rv-0 list answered whole past `maxListBytes`, the paged list at "" that followed, and its watch from rv 10. */
  const afterWholeTooLarge = () =>
    new Machine()
      .send({ type: 'start' })
      .listFailed(didNotFit())
      .timer()
      .listed(page('10', [obj('a', '5')]))
      .opened();

  it('a relist after a watch 410 asks for the last resourceVersion unpaged: the watch cache, one request (with `limit`: etcd, 410 once compacted)', () => {
    const m = afterWholeTooLarge();
    const from = m.log.length;
    m.frame(event('ADDED', obj('b', '11')))
      .frame(event('ERROR', status(410, 'Expired')))
      .timer();
    expect(m.since(from), describeState(m.state)).toEqual(['at once', 'list rv="11" limit=-']);
  });

  it('lists at "" stay paged (and "0" is never asked again)', () => {
    const m = afterWholeTooLarge();
    const from = m.log.length;
    m.frame(event('ADDED', obj('b', '11')))
      .frame(event('ERROR', status(410, 'Expired')))
      .timer();
    m.listFailed(expired('list')).timer();
    expect(m.since(from), describeState(m.state)).toEqual(['at once', 'list rv="11" limit=-', 'at once', 'list rv="" limit=500']);
  });

  it('a relist at a specific resourceVersion is paged once its own whole answer did not fit, at once, and from then on', () => {
    const m = afterWholeTooLarge();
    const from = m.log.length;
    m.frame(event('ADDED', obj('b', '11')))
      .frame(event('ERROR', status(410, 'Expired')))
      .timer();
    m.listFailed(didNotFit())
      .timer()
      .listed(page('12', [obj('a', '5')]))
      .opened();
    m.frame(event('ERROR', status(410, 'Expired'))).timer();
    expect(m.since(from), describeState(m.state)).toEqual([
      ...['at once', 'list rv="11" limit=-', 'at once', 'list rv="11" limit=500', 'watch rv="12"'],
      ...['backoff', 'list rv="12" limit=500'],
    ]);
  });
});

describe('a paged list slower than etcd compaction (client-go tools/pager: FullListIfExpired)', () => {
  /** After the rv-0 list answered whole past `maxListBytes`: the paged list at "" has its first page. */
  const pagedAtLatest = () => new Machine().send({ type: 'start' }).listFailed(didNotFit()).timer();

  it('restarts at once after its first expired continue token, and after the backoff from the second in a row', () => {
    const m = pagedAtLatest();
    const from = m.log.length;
    for (let lap = 0; lap < 3; lap++)
      m.listed(page('10', [obj('a', '5')], 'c1'))
        .listFailed(expired('list'), 300_000)
        .timer();
    expect(m.since(from), describeState(m.state)).toEqual([
      ...['list continue limit=500', 'at once', 'list rv="" limit=500'],
      ...['list continue limit=500', 'backoff', 'list rv="" limit=500'],
      ...['list continue limit=500', 'backoff', 'list rv="" limit=500'],
    ]);
  });

  it('a list that completes in between starts the count again', () => {
    const m = pagedAtLatest();
    m.listed(page('10', [obj('a', '5')], 'c1'))
      .listFailed(expired('list'))
      .timer();
    m.listed(page('10', [obj('a', '5')]))
      .opened()
      .frame(event('ERROR', status(410, 'Expired')), 60_000)
      .timer();
    m.listFailed(expired('list')).timer();
    const from = m.log.length;
    m.listed(page('20', [obj('a', '5')], 'c2'))
      .listFailed(expired('list'))
      .timer();
    expect(m.since(from), describeState(m.state)).toEqual(['list continue limit=500', 'at once', 'list rv="" limit=500']);
  });
});

describe('initial events do not move the resourceVersion (client-go watch() :596-600 and :621-637, watchList() :866-905)', () => {
  const initialEventsEnd = (rv: string) =>
    event('BOOKMARK', { metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } });

  it('a streaming list broken before its initial-events-end bookmark streams again from the last synced resourceVersion', () => {
    const m = new Machine({ watchList: true }).send({ type: 'start' }).opened();
    m.frame(event('ADDED', obj('a', '900'))).frame(event('MODIFIED', obj('b', '5')));
    m.frame(event('BOOKMARK', { metadata: { resourceVersion: '901' } }));
    m.send({ type: 'watchFailed', error: network() }, 10).timer();
    expect(m.log.at(-1), describeState(m.state)).toBe('watch rv="" sendInitialEvents');
  });

  it('after a sync, a streaming relist broken early streams again from the resourceVersion synced, and its bookmark moves it', () => {
    const m = new Machine({ watchList: true }).send({ type: 'start' }).opened().frame(initialEventsEnd('10'));
    m.send({ type: 'watchFailed', error: errorFromStatus(403, status(403, 'Forbidden'), 'watch') }, 10).timer();
    m.frame(event('ADDED', obj('a', '900')))
      .send({ type: 'watchFailed', error: network() }, 10)
      .timer();
    expect(m.log.slice(-2), describeState(m.state)).toEqual(['backoff', 'watch rv="10" sendInitialEvents']);
    m.frame(event('ADDED', obj('a', '900'))).frame(initialEventsEnd('950'));
    expect(m.state.lastRV, describeState(m.state)).toBe('950');
  });

  it('a watch from "" (a list that named no resourceVersion): its ADDED events move nothing until an event of another kind', () => {
    const m = new Machine()
      .send({ type: 'start' })
      .listed(page('', [obj('a', '5')]))
      .opened();
    m.frame(event('ADDED', obj('a', '900'))).frame(event('ADDED', obj('b', '5')));
    expect(m.state.lastRV, describeState(m.state)).toBe('');
    m.frame(event('MODIFIED', obj('b', '950'))).frame(event('ADDED', obj('c', '960')));
    expect(m.state.lastRV, describeState(m.state)).toBe('960');
    m.send({ type: 'watchFailed', error: network() }, 10).timer();
    expect(m.log.at(-1), describeState(m.state)).toBe('watch rv="960"');
  });

  it('a watch from "": a bookmark ends the synthetic events too', () => {
    const m = new Machine().send({ type: 'start' }).listed(page('', [])).opened();
    m.frame(event('ADDED', obj('a', '900'))).frame(event('BOOKMARK', { metadata: { resourceVersion: '901' } }));
    m.frame(event('ADDED', obj('b', '902')));
    expect(m.state.lastRV, describeState(m.state)).toBe('902');
  });

  it('a watch from a specific resourceVersion moves it with every event, ADDED too', () => {
    const m = new Machine()
      .send({ type: 'start' })
      .listed(page('10', []))
      .opened()
      .frame(event('ADDED', obj('a', '11')));
    expect(m.state.lastRV, describeState(m.state)).toBe('11');
  });
});
