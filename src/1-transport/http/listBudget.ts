import * as vm from 'node:vm';
import { defer, switchMap, type Observable } from 'rxjs';
import { InformerError } from '../../0-model/errors.ts';
import { tokenId } from '../../util/tokenId.ts';
import type { BodyLimit } from './body.ts';
import { formatBytes } from './options.ts';
import { budgetAdmits, waitsForCollection } from './listStep.ts';

// The budget of a whole list: the inflated bytes of all the pages of one continue chain together.

/** What a list has read before the page asked for. */
export interface ChainSoFar {
  readonly pages: number;
  readonly bytes: number;
}

const NOTHING: ChainSoFar = { pages: 0, bytes: 0 };

/** A chain as remembered: what it read, and whether a collection was already made for it (at most one each). */
interface Chain extends ChainSoFar {
  readonly collected?: true;
  /** The token it is remembered by (hashed when long): forgotten once the page it continues has been read. */
  readonly id: string;
}

/**
 * A chain left unfinished this large (a quarter of the budget) is collected for before the next list: the reflector
 * dropped it (maxListObjects, maxListPages), its continue token expired, or a page failed, and its objects are garbage.
 */
const ABANDONED_SHARE = 4;

/** Chains remembered at once: one per list in flight on this ListWatch (a reflector has one), with room to spare. */
const MAX_CHAINS = 16;

/**
 * Counts each list's bytes across its continue chain, by the token that continues it, and gives each page
 * the byte limit it may still read: `maxListBytes`, or what is left of `maxListTotalBytes` when that is less.
 * Past the budget the page is aborted and the list is `ListTooLong`. A token not handed out here (or long
 * forgotten) starts a chain anew; what is kept is bounded ({@link MAX_CHAINS} entries, long tokens hashed).
 */
export class ListBudget {
  private readonly chains = new Map<string, Chain>();
  private readonly maxBytes: number;
  /** A list was dropped on this budget, and no list has started since. */
  private overran = false;

  private readonly collect: () => Promise<void>;

  /** `collect`: what frees a dropped list before the next starts ({@link collectGarbage}; a test's spy). */
  constructor(maxBytes: number, collect: () => Promise<void> = collectGarbage) {
    this.maxBytes = maxBytes;
    this.collect = collect;
  }

  /**
   * What the list that `token` continues has read (nothing for a first page). Kept until that page has been read
   * ({@link record}): a page that failed and is asked again (the reflector's `retryPage` after a 429) is charged with
   * the pages before it, not as a list of its own.
   */
  before(token: string | undefined): ChainSoFar {
    if (!token) return NOTHING;
    return this.chains.get(tokenId(token)) ?? NOTHING;
  }

  /** A page of `bytes` came (read with `sofar`, from {@link before}); `token` (when the list goes on) continues it. */
  record(token: string | undefined, sofar: ChainSoFar, bytes: number): void {
    const read = (sofar as Partial<Chain>).id;
    if (read !== undefined) this.chains.delete(read);
    if (!token) return;
    const collected = (sofar as Chain).collected;
    const id = tokenId(token);
    this.chains.set(id, { pages: sofar.pages + 1, bytes: sofar.bytes + bytes, id, ...(collected ? { collected } : {}) });
    for (const oldest of this.chains.keys()) {
      if (this.chains.size <= MAX_CHAINS) break;
      this.chains.delete(oldest);
    }
  }

  /** The limit of the next page: the page's own, or what is left of the budget when that is less. */
  limit(sofar: ChainSoFar, page: BodyLimit): BodyLimit {
    const left = budgetAdmits(this.maxBytes, sofar.bytes, page.maxBytes);
    if (left === undefined) return page;
    const budget = formatBytes(this.maxBytes);
    const read = sofar.pages === 0 ? '' : `${sofar.pages.toLocaleString('en-US')} pages (${sofar.bytes} bytes), then `;
    return {
      maxBytes: left,
      what: page.what,
      option: 'maxListTotalBytes',
      tooLarge: (seen) => {
        this.overran = true;
        return new InformerError(
          'ListTooLong',
          `${page.what}: the list is larger than the ${budget} limit for a whole list (${read}${seen} of the next page); ` +
            'aborted, relisting after the backoff (option maxListTotalBytes; its default is an eighth of the heap limit)',
          { phase: 'list' },
        );
      },
    };
  }

  /**
   * The charge of a streaming list (a watch asked with `sendInitialEvents`) until its initial-events-end bookmark,
   * against the same budget as a paged list's chain: every byte read before the bookmark (for JSON, its objects and
   * arrays when they cost more: {@link PageCost}). Past it the watch is dropped as `ListTooLong`, and the next list
   * or streaming list waits for a collection, as after a paged list dropped on its budget.
   */
  streamingList(what: string, json: boolean, random?: () => number): StreamingListCharge | undefined {
    if (!Number.isFinite(this.maxBytes)) return undefined;
    return new StreamingListCharge(this.maxBytes, what, json ? new PageCost(random) : undefined, () => (this.overran = true));
  }

  /**
   * `open`, the request of a page; for the first page of a list that follows one dropped on this budget, or one left
   * unfinished after reading a quarter of it or more, only after a full collection of the heap has freed the dropped
   * list (see {@link collectGarbage}). Each such list is collected for once (another list still going on this
   * ListWatch looks the same, and keeps its count).
   */
  whenRoom<T>(token: string | undefined, open: () => Observable<T>): Observable<T> {
    // A continued page never waits; a first page's look marks the chains it finds abandoned as collected for.
    if (!waitsForCollection(token, this.overran, () => this.abandoned())) return open();
    this.overran = false;
    return defer(this.collect).pipe(switchMap(open));
  }

  /** Marks every unfinished chain of a quarter of the budget or more as collected for; true when there was one. */
  private abandoned(): boolean {
    let found = false;
    for (const [id, chain] of this.chains) {
      if (chain.collected || chain.bytes * ABANDONED_SHARE < this.maxBytes) continue;
      this.chains.set(id, { ...chain, collected: true });
      found = true;
    }
    return found;
  }
}

/** What a streaming list has read before its initial-events-end bookmark (see {@link ListBudget.streamingList}). */
export class StreamingListCharge {
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly what: string;
  private readonly cost: PageCost | undefined;
  private readonly overran: () => void;

  constructor(maxBytes: number, what: string, cost: PageCost | undefined, overran: () => void) {
    this.maxBytes = maxBytes;
    this.what = what;
    this.cost = cost;
    this.overran = overran;
  }

  /** Charges bytes read before the bookmark: the error that ends the watch once the list is past its budget. */
  add(chunk: Uint8Array): InformerError | undefined {
    this.bytes += chunk.length;
    this.cost?.add(chunk);
    if ((this.cost?.charged ?? this.bytes) <= this.maxBytes) return undefined;
    this.overran();
    const read = this.cost ? this.cost.describe() : `${this.bytes} bytes read`;
    return new InformerError(
      'ListTooLong',
      `${this.what}: the streaming list is larger than the ${formatBytes(this.maxBytes)} limit for a whole list (${read} ` +
        'before the initial-events-end bookmark); aborted, relisting after the backoff (option maxListTotalBytes; its default ' +
        'is an eighth of the heap limit)',
      { phase: 'watch' },
    );
  }
}

/**
 * A full collection, through the cheapest public API that starts one: measuring the heap eagerly
 * (`vm.measureMemory({ execution: 'eager' })`; a heap snapshot would collect too, at far greater cost). Why: V8 lets
 * its heap grow to up to four times what was live at its last full collection before it collects again, so a list
 * of a budget's size, dropped and unreferenced, stays in the heap as garbage while the next list grows, and waiting
 * does not free it (measured: 23 s idle, no collection). The CLI reached 2.5 GB RSS in 60 s against the default
 * budget of 536 MiB; with this collection before each relist, 0.93 GB (docs/reliability.md, "Where the memory of a
 * dropped list goes"). It costs one marking of what is live (43 ms after a 445 MB list was dropped, nothing else
 * live), once per dropped list. Where the API is missing or fails, the list starts without it, as before.
 *
 * Node marks the API experimental and says so once per process with an `ExperimentalWarning` on stderr: a
 * collection the library asks for is not news to its user, so that one warning (and no other) is held back,
 * synchronously around the call that emits it.
 */
export function collectGarbage(): Promise<void> {
  // A namespace import: a runtime without it (not Node) still loads this module.
  const measure = vm.measureMemory as typeof vm.measureMemory | undefined;
  if (typeof measure !== 'function') return Promise.resolve();
  let measured: Promise<unknown>;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && text.includes('measureMemory')) return;
    (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    measured = measure({ mode: 'summary', execution: 'eager' });
  } catch {
    measured = Promise.resolve();
  } finally {
    process.emitWarning = emitWarning;
  }
  return measured.then(
    () => undefined,
    () => undefined, // nothing to report: only the collection was wanted, and the list goes on without it
  );
}

/**
 * Bytes charged for each `{` or `[` of a JSON list page whose values are tiny (see {@link DENSE_BYTES_PER_OPEN}). V8
 * gives an empty object 56 bytes parsed and its slot 8, an empty array 32 + 8 (measured with `v8.getHeapStatistics`
 * after `JSON.parse` of a million values, Node 24, 64-bit without pointer compression); a number, `null` or a repeated
 * short string only its 8-byte slot, a unique short string 24 + 8. A body of `[{},{},…]` (3 bytes and 64 of heap a
 * value) is charged 10.7 times its bytes, where bytes alone let it take 21 times its charge (a 50 MiB body, 460 MB of
 * heap).
 */
export const CHARGE_PER_OPEN = 32;

/**
 * Bytes charged for each item of a protobuf list page, when that is more than its bytes: the protobuf counterpart of
 * {@link CHARGE_PER_OPEN}, about half what the smallest item costs decoded, as that one is half an empty object's heap
 * (the budget's defaults allow for a list's heap being about twice its charge). Measured with `--expose-gc` over
 * a million items decoded by the transport's decoder (Node 24): an empty ConfigMap (`12 00`, 2 bytes on the wire) 123
 * bytes of heap lazily and as read whole (JSON.stringify of each), one named `a` (7 bytes) 107, either dropped to a
 * skeleton by `keepObject` 139. Real items are larger than this on the wire (a ConfigMap with only its identity and
 * creation time, about 100 bytes), so only a hostile page of tiny items is charged more than its bytes; without the
 * charge, a 24 MiB page of empty items (12.5 M of them) ran a 1 GiB heap out of memory under every byte limit.
 */
export const CHARGE_PER_ITEM = 64;

/**
 * Only a page with a `{` or `[` in fewer than this many bytes on average is charged per `{`/`[`; any other is
 * charged its bytes. The budget's defaults already allow for a real list's heap being about twice its bytes, so the
 * charge must never reach a real list: bytes per `{`/`[` measured: a pod 38, a Deployment with 40 env vars and
 * client-side-apply managedFields 16–17.6 (charged 32 a `{` with no threshold, it came to 1.8 times its bytes, and a
 * 133 MiB list of such objects never synced at the default budget: found by review), a ConfigMap holding a minified
 * dashboard 21. `{` and `[` inside strings are no allocation and are not counted where it matters (see
 * {@link PageCost}): a ConfigMap whose value is a table of one-number arrays (`"[1],[2],…"`, 4 bytes a `[`) is
 * charged its bytes. What is left unmodelled: bodies of tiny values just above the threshold (`[{"a":0},…]`, 8 bytes a
 * value) can take about 10 times their bytes of heap, as before this charge.
 */
export const DENSE_BYTES_PER_OPEN = 6;

/** {@link PageCost} reads one word of every this many. */
const SAMPLED_ONE_IN = 4;
const NO_WORDS = new Uint32Array(0);

const LOW7 = 0x7f7f7f7f;
/** How many bytes of the word `v` are `{` or `[` (`[` is `{` with bit 5 clear; exact: no borrow runs between bytes). */
function opensIn(v: number): number {
  const x = (v | 0x20202020) ^ 0x7b7b7b7b;
  const flags = ~(((x & LOW7) + LOW7) | x | LOW7);
  return flags === 0 ? 0 : Math.imul(flags >>> 7, 0x01010101) >>> 24;
}

/**
 * What a JSON list page costs as it arrives (see {@link CHARGE_PER_OPEN}): its bytes, or what its objects and
 * arrays will cost once parsed when that is more. To cost under 1 % of a sync, the count reads one 4-byte word of
 * every {@link SAMPLED_ONE_IN}, which of them drawn at random for each chunk (from `random`: the transport's option, an
 * informer's own `random`, so a seeded run charges alike), and multiplies what it finds: an estimate with no bias that
 * a server cannot aim at (it does not know which words are read), within a per cent over a page of pods (about 0.5 µs
 * a pod counted, against some 70 µs of CPU to sync it). The estimate does not see strings, so from the first chunk
 * whose estimate is dense (a `{` or `[` in fewer than {@link DENSE_BYTES_PER_OPEN} bytes), the only chunks whose
 * count can make the page charged more than its bytes, every byte is read ({@link OutsideStrings}: `{` and `[` inside
 * strings are not counted). A sparse chunk's estimate can never make the charge apply on its own.
 */
export class PageCost {
  private bytes = 0;
  private sampled = 0;
  private exact: OutsideStrings | undefined;
  private readonly random: () => number;

  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  add(chunk: Uint8Array): void {
    const n = chunk.length;
    const start = this.bytes;
    this.bytes += n;
    if (this.exact) return this.exact.add(chunk);
    let i = 0;
    let exact = 0;
    for (; i < n && ((chunk.byteOffset + i) & 3) !== 0; i++) exact += isOpen(chunk[i]!);
    // A chunk of under 4 bytes may end before an aligned offset (a view there would throw): it has no word then.
    const words = i < n ? new Uint32Array(chunk.buffer, chunk.byteOffset + i, (n - i) >>> 2) : NO_WORDS;
    let sampled = 0;
    for (let w = Math.floor(this.random() * SAMPLED_ONE_IN); w < words.length; w += SAMPLED_ONE_IN) sampled += opensIn(words[w]!);
    for (i += words.length * 4; i < n; i++) exact += isOpen(chunk[i]!);
    const estimate = exact + SAMPLED_ONE_IN * sampled;
    if (estimate * DENSE_BYTES_PER_OPEN <= n) {
      this.sampled += estimate;
      return;
    }
    // Dense: this chunk and every one after it are read whole, strings told apart (at the page's start: outside one).
    this.exact = new OutsideStrings(start === 0);
    this.exact.add(chunk);
  }

  /** The objects and arrays counted so far (an estimate: see above). */
  get objectsAndArrays(): number {
    return this.sampled + (this.exact?.opens ?? 0);
  }

  /** What the page is charged so far: its bytes, or its objects' and arrays' charge when more. */
  get charged(): number {
    const opens = this.objectsAndArrays;
    return opens * DENSE_BYTES_PER_OPEN > this.bytes ? Math.max(this.bytes, CHARGE_PER_OPEN * opens) : this.bytes;
  }

  /** The charge explained, for an error's message. */
  describe(): string {
    return `${this.bytes} bytes read, about ${this.objectsAndArrays} objects and arrays: charged ${this.charged} bytes`;
  }
}

/**
 * What a byte is to {@link OutsideStrings}: 0 no JSON outside a string (a letter but those of `true`, `false`, `null`
 * and exponents, a control character, any byte of a multi-byte character), 1 `"`, 2 `\`, 3 `{` or `[`, 4 any other
 * byte JSON has outside strings (white space, `}` `]` `,` `:`, a number's, a literal's).
 */
const BYTE_CLASS = (() => {
  const classes = new Uint8Array(256);
  for (const c of ' \t\n\r}],:0123456789-+.eEtrufalsn') classes[c.charCodeAt(0)] = 4;
  classes[0x22] = 1;
  classes[0x5c] = 2;
  classes[0x7b] = 3;
  classes[0x5b] = 3;
  return classes;
})();

/** States of a reading: 0 outside a string, 1 inside one, 2 just after a `\` inside one, 3 refuted (not JSON so). */
const OUTSIDE = 0;
const REFUTED = 3;
/** The next state, by state × 5 + byte class ({@link BYTE_CLASS}). */
// prettier-ignore
const NEXT = Uint8Array.from([
  // outside: other → refuted, " → inside, \ → refuted, { [ → outside (counted), JSON → outside
  REFUTED, 1, REFUTED, OUTSIDE, OUTSIDE,
  // inside: " ends it, \ escapes the next byte
  1, OUTSIDE, 2, 1, 1,
  // after \: any byte, still inside
  1, 1, 1, 1, 1,
  // refuted stays so
  REFUTED, REFUTED, REFUTED, REFUTED, REFUTED,
]);

/**
 * The `{` and `[` outside JSON strings, read from a point of a page where whether a string is open may be unknown
 * (the chunks before were only sampled): the three readings (outside a string, inside one, just after its `\\`) are
 * followed side by side, and one is dropped at the first byte JSON cannot have there (a letter outside a string, a
 * `\\` outside one). Real JSON refutes the wrong ones within its next key; from then on the one reading left is
 * followed alone, a string skipped to its closing quote at once (`indexOf`). While more than one reading stands, the
 * count is the largest (a server's page of `{},{},…` with no quote is charged all its `{`); if none stands (not JSON:
 * the parse will fail), every `{` and `[` counts.
 */
class OutsideStrings {
  /** The readings still followed (state by {@link NEXT}), and their counts; one left: {@link known}. */
  private readonly states: number[];
  private readonly counts: number[];
  /** Every `{` and `[` since the start, for when no reading stands. */
  private all = 0;
  /** The one reading left: its state (0 outside, 1 inside a string, 2 after its `\\`; 3 none left), its count. */
  private known: { state: number; opens: number } | undefined;

  constructor(atStart: boolean) {
    this.states = atStart ? [OUTSIDE, REFUTED, REFUTED] : [OUTSIDE, 1, 2];
    this.counts = [0, 0, 0];
    if (atStart) this.known = { state: OUTSIDE, opens: 0 };
  }

  add(chunk: Uint8Array): void {
    const from = this.known ? 0 : this.followAll(chunk);
    if (from < chunk.length) this.followOne(chunk, from, this.known!);
  }

  get opens(): number {
    if (this.known) return this.known.opens;
    let most = 0;
    for (let h = 0; h < 3; h++) if (this.states[h] !== REFUTED) most = Math.max(most, this.counts[h]!);
    return most;
  }

  /** Follows every reading left until one (or none) stands; returns where that one goes on from. */
  private followAll(chunk: Uint8Array): number {
    let [a, b, c] = this.states as [number, number, number];
    let [na, nb, nc] = this.counts as [number, number, number];
    let all = this.all;
    let i = 0;
    for (; i < chunk.length && (a !== REFUTED ? 1 : 0) + (b !== REFUTED ? 1 : 0) + (c !== REFUTED ? 1 : 0) > 1; i++) {
      const k = BYTE_CLASS[chunk[i]!]!;
      if (k === 3) {
        all++;
        if (a === OUTSIDE) na++;
        if (b === OUTSIDE) nb++;
        if (c === OUTSIDE) nc++;
      }
      a = NEXT[a * 5 + k]!;
      b = NEXT[b * 5 + k]!;
      c = NEXT[c * 5 + k]!;
    }
    this.states.splice(0, 3, a, b, c);
    this.counts.splice(0, 3, na, nb, nc);
    this.all = all;
    if (a !== REFUTED) this.known = { state: a, opens: na };
    else if (b !== REFUTED) this.known = { state: b, opens: nb };
    else if (c !== REFUTED) this.known = { state: c, opens: nc };
    else this.known = { state: REFUTED, opens: all };
    return i;
  }

  /** Follows the one reading left from `i` to the chunk's end (none left: counts every `{` and `[`). */
  private followOne(chunk: Uint8Array, i: number, known: { state: number; opens: number }): void {
    const n = chunk.length;
    let { state, opens } = known;
    while (i < n) {
      if (state === OUTSIDE || state === REFUTED) {
        for (; i < n; i++) {
          const byte = chunk[i]!;
          if (byte === 0x7b || byte === 0x5b) opens++;
          else if (byte === 0x22 && state === OUTSIDE) {
            state = 1;
            i++;
            break;
          }
        }
        continue;
      }
      if (state === 2) {
        state = 1; // the byte after a backslash
        i++;
        continue;
      }
      // Inside a string: to its closing quote, one not escaped by an odd run of backslashes before it.
      const quote = chunk.indexOf(0x22, i);
      const end = quote < 0 ? n : quote;
      let run = 0;
      while (end - run - 1 >= i && chunk[end - run - 1] === 0x5c) run++;
      if (quote < 0) {
        if (run % 2 === 1) state = 2;
        i = n;
      } else {
        if (run % 2 === 0) state = OUTSIDE;
        i = quote + 1;
      }
    }
    known.state = state;
    known.opens = opens;
  }
}

const isOpen = (byte: number): number => (byte === 0x7b || byte === 0x5b ? 1 : 0);
