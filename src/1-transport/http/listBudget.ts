import { InformerError } from '../../0-model/errors.ts';
import { tokenId } from '../../util/tokenId.ts';
import type { BodyLimit } from './body.ts';
import { formatBytes } from './options.ts';

// The budget of a whole list: the inflated bytes of all the pages of one continue chain together.

/** What a list has read before the page asked for. */
export interface ChainSoFar {
  readonly pages: number;
  readonly bytes: number;
}

const NOTHING: ChainSoFar = { pages: 0, bytes: 0 };

/** Chains remembered at once: one per list in flight on this ListWatch (a reflector has one), with room to spare. */
const MAX_CHAINS = 16;

/**
 * Counts each list's bytes across its continue chain, by the token that continues it, and gives each page
 * the byte limit it may still read: `maxListBytes`, or what is left of `maxListTotalBytes` when that is less.
 * Past the budget the page is aborted and the list is `ListTooLong`. A token not handed out here (or long
 * forgotten) starts a chain anew; what is kept is bounded ({@link MAX_CHAINS} entries, long tokens hashed).
 */
export class ListBudget {
  private readonly chains = new Map<string, ChainSoFar>();
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** What the list that `token` continues has read (nothing for a first page). */
  before(token: string | undefined): ChainSoFar {
    if (!token) return NOTHING;
    const id = tokenId(token);
    const sofar = this.chains.get(id);
    this.chains.delete(id);
    return sofar ?? NOTHING;
  }

  /** A page of `bytes` came; `token` (when the list goes on) continues it. */
  record(token: string | undefined, sofar: ChainSoFar, bytes: number): void {
    if (!token) return;
    this.chains.set(tokenId(token), { pages: sofar.pages + 1, bytes: sofar.bytes + bytes });
    for (const oldest of this.chains.keys()) {
      if (this.chains.size <= MAX_CHAINS) break;
      this.chains.delete(oldest);
    }
  }

  /** The limit of the next page: the page's own, or what is left of the budget when that is less. */
  limit(sofar: ChainSoFar, page: BodyLimit): BodyLimit {
    const left = this.maxBytes - sofar.bytes;
    if (left >= page.maxBytes) return page;
    const budget = formatBytes(this.maxBytes);
    const read = sofar.pages === 0 ? '' : `${sofar.pages.toLocaleString('en-US')} pages (${sofar.bytes} bytes), then `;
    return {
      maxBytes: Math.max(0, left),
      what: page.what,
      option: 'maxListTotalBytes',
      tooLarge: (seen) =>
        new InformerError(
          'ListTooLong',
          `${page.what}: the list is larger than the ${budget} limit for a whole list (${read}${seen} of the next page); ` +
            'aborted, relisting after the backoff (option maxListTotalBytes; its default is an eighth of the heap limit)',
          { phase: 'list' },
        ),
    };
  }
}
