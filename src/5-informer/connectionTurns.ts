import { Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { isInitialEventsEnd, type ListWatch, type WatchOptions } from '../1-transport/listWatch.ts';
import { isRecord } from '../util/isRecord.ts';
import { monotonicScheduler } from '../util/monotonicNow.ts';

// Turns at a bounded set of connections (HTTP/1.1) or streams (HTTP/2), for the per-namespace fallback of an
// informer over many namespaces (docs/transport.md › Many namespaces). Over HTTP/1.1 a request holds a connection
// (a socket, a file descriptor) until it ends, and a watch never ends on its own: 2,000 namespaces would be 2,000
// sockets. Over HTTP/2 a request holds a stream, and the pool carries `http2.maxConnections` × the server's
// `SETTINGS_MAX_CONCURRENT_STREAMS` of them (8 × 100 on a current kube-apiserver): past that a request would fail.
// Here every list and watch of those namespaces takes a turn at one of `capacity` connections or streams: lists
// first (they end soon), then watches, the namespace whose watch ran longest ago first. While others wait, a watch
// asks the server to end it after `turnMs` (its `timeoutSeconds`), so the connection goes back to the pool
// kept alive, and the next namespace's watch resumes from its own resourceVersion with what it missed. A watch
// that does not end by then is ended by the pool (after twice that) and resumed in its next turn. While everything
// fits (HTTP/2 and a server that allows enough streams, the common case) nobody waits, and nothing takes turns:
// every namespace keeps its watch open.
//
// A request that fails for want of a file descriptor (`EMFILE`/`ENFILE`) lowers the bound to what the others hold;
// after a quiet minute without another the bound steps back up, an eighth of the configured one at a time, so a
// shortage that passed (another part of the process held many files for a while) does not cost turns for good. A
// step met by a renewed shortage within its minute lowers the bound again and doubles the next wait (up to 16 min),
// so a limit that stays is tried seldom, not every minute.
//
// The rules are a pure `turnsStep` (state, input, now) → effects; `ConnectionTurns` is its shell (timers, callbacks).

/** Connections the per-namespace fallback of one KubeConfig may hold at once over HTTP/1.1. */
export const DEFAULT_HTTP1_CONNECTIONS = 64;
/**
 * The share of the HTTP/2 pool's streams (`http2.maxConnections` × the server's `SETTINGS_MAX_CONCURRENT_STREAMS`)
 * the per-namespace fallback of one KubeConfig may hold at once; the rest is left to every other request of it
 * (discovery, informers that are not per namespace, leases), so the fallback does not starve them.
 */
export const HTTP2_STREAM_SHARE = 0.75;

/** The streams the per-namespace fallback may hold over HTTP/2, of the `streams` its pool carries: its share, at least 1. */
export function http2Turns(streams: number): number {
  return Math.max(1, Math.floor(streams * HTTP2_STREAM_SHARE));
}

/** How long a watch holds its connection while other requests wait. At least 1 s: a watch ended sooner with no event is a `VeryShortWatch`. */
export const DEFAULT_TURN_MS = 2_000;

/**
 * How long the bound `EMFILE` lowered waits, with no other such failure, before it steps back up: long next to a
 * turn (2 s) and the reflector's backoff (at most 30 s), so a shortage still there is met again before the next step
 * (each failed namespace retries within it); short next to what fewer connections cost for good.
 */
export const DEFAULT_DESCRIPTORS_QUIET_MS = 60_000;
/** Each step back up after `EMFILE` adds this share of the configured bound (at least 1): 64 connections in 8 steps. */
export const DESCRIPTORS_RAISE_SHARE = 1 / 8;
/** A step met by a renewed `EMFILE` doubles the next quiet period, at most this many times in a row (16 minutes). */
export const MAX_DESCRIPTORS_STRIKES = 4;

/**
 * `list`: a list page; `stream`: a streaming list (a watch with `sendInitialEvents`, `watchList: true`), a list
 * until its initial events are in, then a watch; `watch`: a watch.
 */
export type TurnKind = 'list' | 'stream' | 'watch';

export interface TurnsConfig {
  readonly capacity: number;
  readonly turnMs: number;
  /** Default {@link DEFAULT_DESCRIPTORS_QUIET_MS}. */
  readonly quietMs?: number;
}

interface Held {
  readonly id: number;
  readonly kind: TurnKind;
  /** Since when it holds its connection (a streaming list: since its initial events were in). */
  readonly since: number;
  /** Asked the server to end it after `turnMs`. */
  readonly shortened: boolean;
  /** May be told to give way: a watch, or a streaming list past its initial events; never a list. */
  readonly yieldable: boolean;
  /** Told to end (its `done` is on the way). */
  readonly yielding: boolean;
}

interface Waiting {
  readonly id: number;
  readonly kind: TurnKind;
  /** The turn its namespace's last watch had (-1: none yet): the lowest goes first. */
  readonly lastTurn: number;
}

export interface TurnsState {
  /**
   * Connections (streams) that may be held at once: `ceiling`, lowered at each `EMFILE`, stepping back up to it after
   * quiet periods.
   */
  readonly capacity: number;
  /** The configured capacity or the last `capacity` input: what `capacity` returns to after `EMFILE`. */
  readonly ceiling: number;
  /** When `capacity` steps up next (Infinity: at `ceiling`). */
  readonly raiseAt: number;
  /** When it last stepped up, and when `EMFILE` last lowered it (-Infinity: never). */
  readonly raisedAt: number;
  readonly loweredAt: number;
  /** Steps met by a renewed `EMFILE` within their quiet period, in a row: each doubles the next quiet period. */
  readonly strikes: number;
  readonly held: readonly Held[];
  readonly waiting: readonly Waiting[];
  /** Turns given so far. */
  readonly turns: number;
  /** When the armed check fires (Infinity: none armed). */
  readonly checkAt: number;
}

export type TurnsInput =
  | { readonly type: 'request'; readonly id: number; readonly kind: TurnKind; readonly lastTurn: number }
  /** A streaming list's initial events are in: from now on it is a watch like any other. */
  | { readonly type: 'settled'; readonly id: number }
  /**
   * A request ended, or left while it waited; `exhausted`: it failed for want of a file descriptor
   * (`EMFILE`/`ENFILE`), so fewer connections are held until a quiet period has passed.
   */
  | { readonly type: 'done'; readonly id: number; readonly exhausted?: boolean }
  /**
   * What may be held at once now (the protocol became known, or the server's SETTINGS changed): replaces the
   * bound, `EMFILE`'s lowering included. Nothing held is ended for it: while it is over, nobody more is granted.
   */
  | { readonly type: 'capacity'; readonly capacity: number }
  | { readonly type: 'check' };

export type TurnsEffect =
  /** Start the request; a watch with `shorten` asks for `timeoutSeconds` of one turn. */
  | { readonly type: 'grant'; readonly id: number; readonly turn: number; readonly shorten: boolean }
  /** End this watch now (cleanly: it is resumed in its next turn). */
  | { readonly type: 'yield'; readonly id: number }
  | { readonly type: 'arm'; readonly delayMs: number }
  | { readonly type: 'disarm' };

/** Nobody holds or waits for a turn yet. */
export function initialTurns(config: TurnsConfig): TurnsState {
  const capacity = Math.max(1, config.capacity);
  return {
    ...{ capacity, ceiling: capacity, raiseAt: Infinity, raisedAt: -Infinity, loweredAt: -Infinity, strikes: 0 },
    ...{ held: [], waiting: [], turns: 0, checkAt: Infinity },
  };
}

/** The quiet period after `strikes` steps met by a renewed `EMFILE`: doubled for each. */
const quietMs = (config: TurnsConfig, strikes: number) => (config.quietMs ?? DEFAULT_DESCRIPTORS_QUIET_MS) * 2 ** strikes;

/** The waiter that goes next: the first list, else the watch whose namespace had its turn longest ago (then: first come). */
function nextWaiting(waiting: readonly Waiting[]): number {
  const list = waiting.findIndex((w) => w.kind !== 'watch');
  if (list >= 0) return list;
  let best = 0;
  for (let i = 1; i < waiting.length; i++) if (waiting[i]!.lastTurn < waiting[best]!.lastTurn) best = i;
  return best;
}

/** When a held watch is due to give its connection up while others wait. */
const dueAt = (config: TurnsConfig, h: Held) => h.since + (h.shortened ? 2 : 1) * config.turnMs;

/** One input: who holds a connection, who waits, and what to do about it. */
export function turnsStep(
  config: TurnsConfig,
  state: TurnsState,
  input: TurnsInput,
  now: number,
): { state: TurnsState; effects: TurnsEffect[] } {
  const effects: TurnsEffect[] = [];
  let held = [...state.held];
  let waiting = [...state.waiting];
  let { capacity, ceiling, raiseAt, raisedAt, loweredAt, strikes, turns, checkAt } = state;
  if (input.type === 'request') waiting.push({ id: input.id, kind: input.kind, lastTurn: input.lastTurn });
  else if (input.type === 'done') {
    held = held.filter((h) => h.id !== input.id);
    waiting = waiting.filter((w) => w.id !== input.id);
    if (input.exhausted) {
      // Out of descriptors: at most as many as the others hold now, and one fewer than before each time.
      capacity = Math.max(1, Math.min(capacity - 1, held.length));
      // The first such failure since a step up, within its quiet period: the step was too soon (the shortage is still
      // there), so the next wait is twice as long. One after a step that stood its period is a new shortage.
      if (raisedAt > loweredAt) strikes = now - raisedAt < quietMs(config, strikes) ? Math.min(strikes + 1, MAX_DESCRIPTORS_STRIKES) : 0;
      loweredAt = now;
      raiseAt = capacity < ceiling ? now + quietMs(config, strikes) : Infinity;
    }
  } else if (input.type === 'capacity') {
    capacity = ceiling = Math.max(1, Math.floor(input.capacity));
    raiseAt = Infinity;
  } else if (input.type === 'settled') {
    held = held.map((h) => (h.id === input.id && h.kind === 'stream' && !h.yieldable ? { ...h, yieldable: true, since: now } : h));
  } else checkAt = Infinity;
  // A quiet period without EMFILE: one step back up (the previous step, if it stood its period, clears the strikes).
  if (now >= raiseAt) {
    if (raisedAt > loweredAt) strikes = 0;
    capacity = Math.min(ceiling, capacity + Math.max(1, Math.ceil(ceiling * DESCRIPTORS_RAISE_SHARE)));
    raisedAt = now;
    raiseAt = capacity < ceiling ? now + quietMs(config, strikes) : Infinity;
  }
  const granted: Waiting[] = [];
  while (held.length + granted.length < capacity && waiting.length > 0) granted.push(...waiting.splice(nextWaiting(waiting), 1));
  // A watch granted while others still wait (after this step's grants) asks the server to end it after one turn.
  for (const next of granted) {
    const shorten = next.kind === 'watch' && waiting.length > 0;
    held.push({ id: next.id, kind: next.kind, since: now, shortened: shorten, yieldable: next.kind === 'watch', yielding: false });
    effects.push({ type: 'grant', id: next.id, turn: ++turns, shorten });
  }
  // Others wait: the watches past their turn give their connection up, oldest first, one per waiter.
  let owed = waiting.length === 0 ? 0 : waiting.length - held.filter((h) => h.yielding).length;
  // Nobody waits (everything fits): nothing to sort (over HTTP/2 thousands may be held).
  const watches = owed <= 0 ? [] : held.filter((h) => h.yieldable && !h.yielding).sort((a, b) => dueAt(config, a) - dueAt(config, b));
  for (const h of watches) {
    if (owed <= 0 || dueAt(config, h) > now) break;
    owed--;
    held = held.map((x) => (x.id === h.id ? { ...x, yielding: true } : x));
    effects.push({ type: 'yield', id: h.id });
  }
  // The next watch to come due, while someone still waits for it; the next step up, while anyone waits.
  const next = owed > 0 ? watches.map((h) => dueAt(config, h)).find((at) => at > now) : undefined;
  const wantAt = Math.min(next ?? Infinity, waiting.length > 0 ? raiseAt : Infinity);
  if (wantAt !== checkAt) {
    // At least 1 ms away: with fractional virtual times, a check "now" could repeat forever.
    effects.push(wantAt === Infinity ? { type: 'disarm' } : { type: 'arm', delayMs: Math.max(1, wantAt - now) });
    checkAt = wantAt === Infinity ? Infinity : now + Math.max(1, wantAt - now);
  }
  return { state: { capacity, ceiling, raiseAt, raisedAt, loweredAt, strikes, held, waiting, turns, checkAt }, effects };
}

interface Ticket {
  grant(turn: number, shorten: boolean): void;
  yield(): void;
}

/** One request's turn: end it (or stop waiting), or say a streaming list's initial events are in. */
export interface Turn {
  /** `exhausted`: it failed for want of a file descriptor. Idempotent. */
  release(exhausted?: boolean): void;
  settle(): void;
}

/** The shell's settings: `capacity` a number, or what may be held now (asked at each input; a change is fed as `capacity`). */
export interface TurnsSettings {
  readonly capacity?: number | (() => number);
  readonly turnMs?: number;
}

/**
 * The shell of {@link turnsStep}: hands out turns at `capacity` connections (or streams), and runs the one timer
 * (a watch's turn coming due while others wait; none while nobody waits).
 */
export class ConnectionTurns {
  private state: TurnsState;
  private readonly tickets = new Map<number, Ticket>();
  private readonly inbox: TurnsInput[] = [];
  private draining = false;
  private nextId = 0;
  private timer: Subscription | undefined;
  private readonly config: TurnsConfig;
  private readonly scheduler: SchedulerLike;
  private readonly bound: () => number;
  /** What `bound` said last. */
  private bounded: number;

  /**
   * `scheduler`: the timers and the clock of turns and of `EMFILE`'s quiet periods; by default every duration's
   * (`monotonicScheduler`: a wall-clock step does not move them, and `TestScheduler.run()`'s virtual time does).
   */
  constructor(settings: TurnsSettings = {}, scheduler: SchedulerLike = monotonicScheduler) {
    const capacity = settings.capacity ?? DEFAULT_HTTP1_CONNECTIONS;
    this.bound = typeof capacity === 'number' ? () => capacity : capacity;
    this.bounded = this.bound();
    this.config = { capacity: this.bounded, turnMs: settings.turnMs ?? DEFAULT_TURN_MS };
    this.scheduler = scheduler;
    this.state = initialTurns(this.config);
  }

  /** Requests held and waiting now (tests, diagnostics). */
  get counts(): { readonly held: number; readonly waiting: number; readonly capacity: number } {
    return { held: this.state.held.length, waiting: this.state.waiting.length, capacity: this.state.capacity };
  }

  /** One turn lasts this long, in whole seconds (the `timeoutSeconds` a shortened watch asks for). */
  get turnSeconds(): number {
    return Math.max(1, Math.round(this.config.turnMs / 1000));
  }

  /**
   * Waits for a turn: `ticket(release)` says what to do when it comes (`grant`) and when a watch's turn is
   * over (`yield`); `release` (also returned) ends the turn, or stops waiting for it. Idempotent.
   */
  request(kind: TurnKind, lastTurn: number, ticket: (turn: Turn) => Ticket): Turn {
    const id = this.nextId++;
    const turn: Turn = {
      release: (exhausted = false) => {
        if (this.tickets.delete(id)) this.feed({ type: 'done', id, exhausted });
      },
      settle: () => {
        if (this.tickets.has(id)) this.feed({ type: 'settled', id });
      },
    };
    this.tickets.set(id, ticket(turn));
    this.feed({ type: 'request', id, kind, lastTurn });
    return turn;
  }

  private feed(input: TurnsInput): void {
    const capacity = this.bound();
    if (capacity !== this.bounded) {
      this.bounded = capacity;
      this.inbox.push({ type: 'capacity', capacity });
    }
    this.inbox.push(input);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let i = 0; i < this.inbox.length; i++) {
        const result = turnsStep(this.config, this.state, this.inbox[i]!, this.scheduler.now());
        this.state = result.state;
        for (const effect of result.effects) this.perform(effect);
      }
    } finally {
      this.draining = false;
      this.inbox.length = 0;
    }
  }

  private perform(effect: TurnsEffect): void {
    switch (effect.type) {
      case 'grant':
        return this.tickets.get(effect.id)?.grant(effect.turn, effect.shorten);
      case 'yield':
        return this.tickets.get(effect.id)?.yield();
      case 'arm':
        this.timer?.unsubscribe();
        this.timer = this.scheduler.schedule(() => {
          this.timer = undefined;
          this.feed({ type: 'check' });
        }, effect.delayMs);
        return;
      case 'disarm':
        this.timer?.unsubscribe();
        this.timer = undefined;
        return;
    }
  }
}

/**
 * `listWatch` whose lists and watches take turns at `turns`. One namespace's ListWatch: it remembers its last
 * watch's turn, so that a watch the reflector ended while it waited (its idle rule) and opened again keeps its place.
 */
export function takingTurns(listWatch: ListWatch, turns: ConnectionTurns): ListWatch {
  let lastTurn = -1;
  const through = <F>(kind: TurnKind, open: (shorten: boolean) => Observable<F>) =>
    new Observable<F>((subscriber) => {
      let inner: Subscription | undefined;
      let ended = false;
      let settled = kind !== 'stream';
      // Set before the first callback can run (a grant may come at once, within `request`).
      let mine: Turn | undefined;
      turns.request(kind, lastTurn, (handle) => {
        mine = handle;
        const { release, settle } = handle;
        return {
          grant: (turn, shorten) => {
            if (kind !== 'list') lastTurn = turn;
            const end = (then: () => void, exhausted = false) => {
              ended = true;
              release(exhausted);
              then();
            };
            inner = open(shorten).subscribe({
              next: (frame) => {
                subscriber.next(frame);
                if (!settled && isInitialEventsEndFrame(frame)) {
                  settled = true;
                  settle();
                }
              },
              error: (error: unknown) => end(() => subscriber.error(error), isOutOfDescriptors(error)),
              complete: () => end(() => subscriber.complete()),
            });
          },
          yield: () => {
            if (ended) return;
            ended = true;
            inner?.unsubscribe();
            release();
            subscriber.complete();
          },
        };
      });
      return () => {
        inner?.unsubscribe();
        mine?.release();
      };
    });
  return {
    ...(listWatch.reachable$ ? { reachable$: listWatch.reachable$ } : {}),
    list: (options) => through('list', () => listWatch.list(options)),
    watch: (options: WatchOptions) =>
      through(options.sendInitialEvents === true ? 'stream' : 'watch', (shorten) =>
        listWatch.watch(
          shorten ? { ...options, timeoutSeconds: Math.min(options.timeoutSeconds ?? Infinity, turns.turnSeconds) } : options,
        ),
      ),
  };
}

/** The bookmark that ends a streaming list's initial events (`k8s.io/initial-events-end`, the reflector's own test). */
function isInitialEventsEndFrame(frame: unknown): boolean {
  return isRecord(frame) && frame.type === 'BOOKMARK' && isInitialEventsEnd(frame.object);
}

/** Codes of a failure for want of a file descriptor: the process's (`ulimit -n`) or the system's. */
const OUT_OF_DESCRIPTORS = new Set(['EMFILE', 'ENFILE']);

/** Whether `error` (or what caused it, as an `InformerError`'s `cause`) is `EMFILE` or `ENFILE`. */
export function isOutOfDescriptors(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && OUT_OF_DESCRIPTORS.has(code)) return true;
  }
  return false;
}
