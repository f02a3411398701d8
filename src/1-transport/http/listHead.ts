// The continue token of a JSON list page read from the page's first bytes, before its items (see ./prefetch.ts).

/** Bytes of a page's start looked at for its metadata: a server writes kind, apiVersion and metadata first (~300 bytes). */
export const HEAD_SCAN_BYTES = 64 * 1024;

/**
 * Reads the start of a JSON list body, chunk by chunk, for the list's `metadata.continue`: {@link token} is then the
 * token, or `''` once it is known there is none to read early (the metadata has no token, `items` or anything a
 * server does not write came first, or the metadata did not end within {@link HEAD_SCAN_BYTES}). Only a hint, never
 * the page's value: the page is decoded as before, and a prefetch opened for a token other than the one the page
 * decodes to is never claimed (./prefetch.ts). Bounded: each byte is scanned once, at most HEAD_SCAN_BYTES are kept,
 * and only the metadata object's text is parsed.
 */
export class JsonListHead {
  /** The token, `''` for none (decided), undefined while undecided. */
  token: string | undefined;
  private text = '';
  private at = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Where the top-level member name being read starts, or -1. */
  private keyStart = -1;
  private lastKey: string | undefined;
  private expectKey = false;
  private metadataStart = -1;

  push(chunk: Buffer): void {
    if (this.token !== undefined) return;
    const room = HEAD_SCAN_BYTES - this.text.length;
    // latin1 keeps one character per byte: the structure is ASCII, and the token is checked to be ASCII.
    this.text += (chunk.length > room ? chunk.subarray(0, room) : chunk).toString('latin1');
    this.token = this.scan();
    if (this.token === undefined && this.text.length >= HEAD_SCAN_BYTES) this.token = '';
    if (this.token !== undefined) this.text = '';
  }

  /** Scans what came since the last call: the token when decided, else undefined. */
  private scan(): string | undefined {
    const text = this.text;
    for (; this.at < text.length; this.at++) {
      const i = this.at;
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) {
          this.inString = false;
          if (this.keyStart >= 0) this.lastKey = text.slice(this.keyStart, i);
          this.keyStart = -1;
        }
        continue;
      }
      if (this.depth === 0 && c !== 0x7b && !isSpace(c)) return '';
      switch (c) {
        case 0x22: // "
          this.inString = true;
          if (this.depth === 1 && this.expectKey) this.keyStart = i + 1;
          this.expectKey = false;
          break;
        case 0x7b: // {
        case 0x5b: // [
          this.depth++;
          if (this.depth === 1) this.expectKey = true;
          else if (this.depth === 2) {
            if (this.lastKey === 'items') return '';
            if (this.lastKey === 'metadata' && c === 0x7b) this.metadataStart = i;
          }
          break;
        case 0x7d: // }
        case 0x5d: // ]
          this.depth--;
          if (this.depth < 1) return '';
          if (this.depth === 1 && this.metadataStart >= 0) return tokenOf(text.slice(this.metadataStart, i + 1));
          break;
        case 0x2c: // ,
          if (this.depth === 1) this.expectKey = true;
          break;
        default:
          break;
      }
    }
    return undefined;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The metadata object's `continue` when a non-empty printable ASCII string, else `''`. */
function tokenOf(metadata: string): string {
  let value: unknown;
  try {
    value = JSON.parse(metadata);
  } catch {
    return '';
  }
  const token = typeof value === 'object' && value !== null ? (value as { continue?: unknown }).continue : undefined;
  return typeof token === 'string' && /^[\x20-\x7e]+$/.test(token) ? token : '';
}
