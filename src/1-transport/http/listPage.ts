import type { Subscriber } from 'rxjs';
import { InformerError, asStatus, errorFromStatus, isFailureStatus } from '../../0-model/errors.ts';
import type { ListPage } from '../listWatch.ts';
import { isProtobuf } from '../protobuf/decode.ts';
import type { HttpResponse } from '../http2/response.ts';
import { httpError, limitFor, readBody, tooLargeError, type BodyLimit } from './body.ts';
import { syntaxErrorAt, toListPage } from './decode.ts';
import { listBodyDecoder } from './listBody.ts';
import { PageCost } from './listBudget.ts';
import type { MetadataAccept } from './metadataAccept.ts';
import type { HttpTransportOptions, RequestSettings } from './options.ts';
import type { BodyProgress } from './progress.ts';

// One page of a paged list read from its response (moved from ../httpTransport.ts as it was).

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

/**
 * Reads one list response within `pageLimit`: an error Status (non-200), or a page decoded as it arrives,
 * never held whole (see ./http/listBody.ts); `received` hears of a page and what it is charged (its inflated bytes,
 * or a JSON page's objects' and arrays' charge when more: {@link PageCost}) before it is emitted.
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
  const decoder = listBodyDecoder(options.lazyDecode === true, options.keepObject, protobuf);
  let bytes = 0;
  // A JSON page is charged what its objects and arrays will cost parsed when that is more than its bytes (listBudget.ts).
  const cost = protobuf ? undefined : new PageCost(options.random);
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
      if (askedAhead) return;
      const token = decoder.continueToken();
      if (token === undefined) return;
      askedAhead = true;
      if (token !== '') ahead!(token);
    },
    chunksDone: () => decoder.chunksDone?.() ?? 0, // the protobuf decoder's: its chunks are freed as it goes
    wantsEachChunk: () => !askedAhead, // the token is looked for in each chunk as it comes, not in 64 KiB slabs
    end: () => {
      decoder.end();
      let value: unknown;
      try {
        value = decoder.value();
      } catch (error) {
        const detail = protobuf
          ? `list ${path}: the response is not a protobuf list (${bytes} bytes; ${error instanceof Error ? error.message : String(error)})`
          : `list ${path}: the response is not JSON (${bytes} bytes${syntaxErrorAt(error)})`;
        return subscriber.error(new InformerError('MalformedLine', detail, { phase: 'list' }));
      }
      // A failure Status answered with 200 (a proxy, a broken aggregated API) is its error, as client-go's Result.Into.
      const status = asStatus(value);
      if (isFailureStatus(status)) return subscriber.error(errorFromStatus(status.code ?? 500, value, 'list'));
      const page = toListPage(value, shape);
      if (!page) return subscriber.error(new InformerError('MalformedLine', `list ${path}: the response is not a list`, { phase: 'list' }));
      received(page, cost?.charged ?? bytes);
      const pending = reading.accept.takeNotice();
      subscriber.next(pending ? { ...page, notice: pending } : page);
      subscriber.complete();
    },
  };
  readBody(response, limit, sink, failed, 'list', progress);
}
