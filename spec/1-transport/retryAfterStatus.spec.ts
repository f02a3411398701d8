/**
 * `Retry-After` is read on a 429 and on every 5xx (client-go's checkWait, rest/with_retry.go), not only on a 503
 * (audit23): a 500 or 502 asking a client to wait is honoured, and a continue page so answered is asked again.
 */
import { describe, expect, it } from 'vitest';
import { httpError } from '../../src/1-transport/http/body.ts';
import type { HttpResponse } from '../../src/1-transport/http2/response.ts';

const answer = (statusCode: number) =>
  ({ statusCode, headers: { 'retry-after': '7', 'content-type': 'application/json' } }) as unknown as HttpResponse;

describe('Retry-After on every 5xx and on a 429', () => {
  for (const code of [429, 500, 502, 503, 504])
    it(`${code}: read`, () => expect(httpError(answer(code), Buffer.from('{}'), 'list').retryAfterSeconds).toBe(7));
  for (const code of [400, 403, 410])
    it(`${code}: not read`, () => expect(httpError(answer(code), Buffer.from('{}'), 'list').retryAfterSeconds).toBeUndefined());
});
