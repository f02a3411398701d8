import { Observable, type Subscriber } from 'rxjs';
import { InformerError } from '../../0-model/errors.ts';
import { MAX_CONTINUE_TOKEN_CHARS, type ListOptions, type ListPage } from '../listWatch.ts';
import { isProtobuf, TooManyItems } from '../protobuf/decode.ts';
import type { HttpResponse } from '../http2/response.ts';
import { httpError, limitFor, readBody, tooLargeError, type BodyLimit } from './body.ts';
import { listBodyDecoder } from './listBody.ts';
import { CHARGE_PER_ITEM, PageCost, type ListBudget } from './listBudget.ts';
import { pageOutcome, type DecodedPage } from './listStep.ts';
import type { PagePrefetch } from './prefetch.ts';
import type { MetadataAccept } from './metadataAccept.ts';
import type { HttpTransportOptions, RequestSettings } from './options.ts';
import { bodyProgress, type BodyProgress } from './progress.ts';

// The paged list path's shell: a `list`'s request (its own, or the one held ahead: ./prefetch.ts), its idle timer and
// progress rule, its body read within the budget's limit (./listBudget.ts). The decisions are ./listStep.ts's.

/** What reading a list or watch response of one ListWatch needs. */
export interface Reading {
  readonly path: string;
  readonly settings: RequestSettings;
  readonly options: HttpTransportOptions;
  readonly accept: MetadataAccept;
  /** Whether protobuf was asked for: then a response whose Content-Type says protobuf is read as protobuf. */
  readonly protobuf: boolean;
  readonly shape: ((object: unknown) => unknown) | undefined;
}

/** What a ListWatch's list path is made of: how it reads, its limits, and the budget and prefetch slot its lists share. */
export interface ListPath {
  readonly reading: Reading;
  /** A page's own limit (`maxListBytes`). */
  readonly listLimit: BodyLimit;
  /** No byte for this long fails the page (`listIdleTimeoutMs`; undefined: off). */
  readonly idleMs: number | undefined;
  readonly budget: ListBudget;
  /** The one slot of pages asked ahead (undefined: `prefetchPages: false`). */
  readonly prefetch: PagePrefetch | undefined;
  /** A list request's path and query. */
  readonly query: (options: ListOptions) => string;
}

/**
 * The ListWatch's `list` on `path`: the shell that performs the list path's effects (a request claimed from the
 * prefetch or opened, the request ahead opened once a page tells its token, released when the page's subscription
 * ends), arms the page's idle timer and reads it. Why a shell of its own: `httpListWatch` only wires settings.
 */
export function listPages(path: ListPath): (listOptions: ListOptions) => Observable<ListPage> {
  const { reading, listLimit, idleMs, budget, prefetch, query } = path;
  const what = `list ${reading.path}`;
  const openList = (pathAndQuery: string, token: string | undefined, progress: BodyProgress | undefined) =>
    // After a list dropped on its budget, the next one starts once the heap is collected (listBudget.ts).
    budget.whenRoom(token, () => reading.accept.open(pathAndQuery, 'list', { idleMs, progress }));

  return (listOptions) =>
    new Observable<ListPage>((subscriber) => {
      const pathAndQuery = query(listOptions);
      const claimed = prefetch?.claim(pathAndQuery);
      const sofar = budget.before(listOptions.continue);
      // A page (or its error body, or a 406's before it) must keep coming, not only come now and then (./progress.ts).
      const progress = claimed ? claimed.progress : bodyProgress(reading.options, what, 'list');
      const opened = claimed?.opened ?? openList(pathAndQuery, listOptions.continue, progress);
      // This page's token opens the page the reflector asks next (same limit, no resourceVersion: listing.ts's continueList).
      const owner = {};
      const ahead = prefetch
        ? (token: string) => {
            const next = query({ limit: listOptions.limit, continue: token });
            const nextProgress = bodyProgress(reading.options, what, 'list');
            prefetch.open(owner, next, openList(next, token, nextProgress), nextProgress);
          }
        : undefined;
      let completed = false;
      const out = {
        next: (value: ListPage) => subscriber.next(value),
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          completed = true;
          subscriber.complete();
        },
      };
      const read = opened.subscribe({
        next: ({ response }) => {
          if (idleMs !== undefined) {
            response.setTimeout(idleMs, () => {
              subscriber.error(new InformerError('Timeout', `${what}: no bytes for ${idleMs} ms`, { phase: 'list' }));
            });
          }
          const received = (page: ListPage, bytes: number) => budget.record(page.continue, sofar, bytes);
          readListPage(response, budget.limit(sofar, listLimit), reading, out, progress, received, ahead);
        },
        error: (error: unknown) => subscriber.error(error),
      });
      return () => {
        read.unsubscribe();
        progress?.stop();
        prefetch?.release(owner, completed);
      };
    });
}

/**
 * Reads one list response within `pageLimit`: an error Status (non-200), or a page decoded as it arrives,
 * never held whole (see ./http/listBody.ts); `received` hears of a page and what it is charged (its inflated bytes,
 * or when more a JSON page's objects' and arrays' charge, {@link PageCost}, a protobuf page's items' charge,
 * {@link CHARGE_PER_ITEM}) before it is emitted.
 */
export function readListPage(
  response: HttpResponse,
  pageLimit: BodyLimit,
  reading: Reading,
  subscriber: Pick<Subscriber<ListPage>, 'next' | 'error' | 'complete'>,
  progress: BodyProgress | undefined,
  received: (page: ListPage, bytes: number) => void,
  ahead?: (token: string) => void,
): void {
  const { path, settings, options, shape } = reading;
  const limit = limitFor(response, pageLimit, settings);
  const failed = (error: InformerError) => subscriber.error(error);
  if (response.statusCode !== 200) {
    readBody(response, limit, (body) => subscriber.error(httpError(response, body, 'list')), failed, 'list', progress);
    return;
  }
  const protobuf = reading.protobuf && isProtobuf(response.headers['content-type']);
  // A protobuf page is charged CHARGE_PER_ITEM an item when that is more than its bytes: its decoder stops at the item
  // past what the limit allows so charged (its header read, nothing of it decoded), as PageCost stops a JSON page.
  const maxItems = Math.floor(limit.maxBytes / CHARGE_PER_ITEM);
  const decoder = listBodyDecoder(options.lazyDecode === true, options.keepObject, protobuf, maxItems);
  let bytes = 0;
  // A JSON page is charged what its objects and arrays will cost parsed when that is more than its bytes (listBudget.ts).
  const cost = protobuf ? undefined : new PageCost(options.random);
  const tooManyItems = () =>
    tooLargeError(
      limit,
      `${bytes} bytes read, more than ${maxItems} items: charged ${CHARGE_PER_ITEM} bytes an item`,
      'list',
      response.statusCode,
    );
  let over = false;
  // Asked once the decoder has read the list's metadata (before the items): a non-empty token opens the next page.
  let askedAhead = ahead === undefined;
  const sink = {
    keepsNoBytes: protobuf, // the protobuf decoder copies what it keeps (lazy members, strings)
    chunk: (chunk: Buffer) => {
      if (over) return;
      bytes += chunk.length;
      cost?.add(chunk);
      if (cost && cost.charged > limit.maxBytes) {
        over = true;
        response.destroy();
        return subscriber.error(tooLargeError(limit, cost.describe(), 'list', response.statusCode));
      }
      decoder.chunk(chunk);
      if (decoder.pastMaxItems?.()) {
        over = true;
        response.destroy();
        return subscriber.error(tooManyItems());
      }
      if (askedAhead) return;
      const token = decoder.continueToken();
      if (token === undefined) return;
      askedAhead = true;
      // A token past the bound is not sent: the reflector refuses the page (src/2-source/listing.ts).
      if (token !== '' && token.length <= MAX_CONTINUE_TOKEN_CHARS) ahead!(token);
    },
    chunksDone: () => decoder.chunksDone?.() ?? 0, // the protobuf decoder's: its chunks are freed as it goes
    wantsEachChunk: () => !askedAhead, // the token is looked for in each chunk as it comes, not in 64 KiB slabs
    end: () => {
      decoder.end();
      let decoded: DecodedPage;
      try {
        decoded = { value: decoder.value() };
      } catch (thrown) {
        decoded = { thrown };
      }
      if ('thrown' in decoded && decoded.thrown instanceof TooManyItems) return subscriber.error(tooManyItems());
      const page = pageOutcome(decoded, { path, protobuf, bytes, shape });
      if (page instanceof InformerError) return subscriber.error(page);
      received(page, cost?.charged ?? (protobuf ? Math.max(bytes, CHARGE_PER_ITEM * page.items.length) : bytes));
      const pending = reading.accept.takeNotice();
      subscriber.next(pending ? { ...page, notice: pending } : page);
      subscriber.complete();
    },
  };
  readBody(response, limit, sink, failed, 'list', progress);
}
