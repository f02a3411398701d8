import { createHash } from 'node:crypto';

/**
 * What is remembered of a continue token: itself when short (real ones are a few hundred bytes at
 * most), else its SHA-256, so that a server sending huge tokens cannot grow what is kept by their size.
 */
export function tokenId(token: string): string {
  return token.length <= 64 ? token : `#${createHash('sha256').update(token).digest('base64')}`;
}
