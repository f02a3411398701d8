import { describe, expect, it } from 'vitest';
import {
  InformerError,
  MAX_STATUS_MESSAGE_CHARS,
  asStatus,
  capMessage,
  errorFromStatus,
  isResumable,
  reasonForStatus,
} from '../../src/0-model/errors.ts';

describe("a server's Status message where errors are built", () => {
  it('is printed whole up to 1 KiB, else as its first 1 KiB and its size in bytes', () => {
    expect(MAX_STATUS_MESSAGE_CHARS).toBe(1024);
    expect(capMessage('short')).toBe('short');
    expect(capMessage('a'.repeat(1024))).toBe('a'.repeat(1024));
    expect(capMessage('a'.repeat(2_000_000))).toBe(`${'a'.repeat(1024)}… (2000000 bytes)`);
    // Never between the two halves of a surrogate pair; the size counts UTF-8 bytes.
    const emoji = `${'a'.repeat(1023)}😀${'b'.repeat(10)}`;
    expect(capMessage(emoji)).toBe(`${'a'.repeat(1023)}… (1037 bytes)`);
  });

  it('takes its cap and its tail as named options (the CLI: 1,000 characters, then the characters left out)', () => {
    expect(capMessage('abcdef', { maxChars: 4 })).toBe('abcd… (6 bytes)');
    expect(capMessage('abcdef', { maxChars: 4, tail: 'characters' })).toBe('abcd… (2 more characters)');
    expect(capMessage('abcd', { maxChars: 4, tail: 'characters' })).toBe('abcd');
    expect(capMessage('abc😀d', { maxChars: 4, tail: 'characters' })).toBe('abc… (3 more characters)');
  });

  it('errorFromStatus and asStatus cap it; the Status object stays in statusObject (bounded by the body limit)', () => {
    const body = { kind: 'Status', status: 'Failure', message: 'm'.repeat(50_000), reason: 'r'.repeat(5000), code: 500 };
    const error = errorFromStatus(500, body, 'list');
    expect(error.reason).toBe('ServerError');
    expect(error.message).toBe(`${'m'.repeat(1024)}… (50000 bytes)`);
    expect(error.statusObject).toBe(body);
    expect(asStatus(body)?.message?.length).toBeLessThan(1100);
    expect(asStatus(body)?.reason?.length).toBeLessThan(300);
  });
});

describe('which body speaks for an error response (client-go: rest/request.go, Result.Error)', () => {
  it.each([
    // A gateway's JSON is not a Status: its code must not turn a 503 into a permanent 404.
    [503, { code: 404, message: 'no healthy upstream' }, 'ServerError', 503, 'HTTP 503: no healthy upstream'],
    [503, { code: 14, message: 'upstream connect error' }, 'ServerError', 503, 'HTTP 503: upstream connect error'],
    // A Status that says Success does not describe a failure.
    [500, { kind: 'Status', status: 'Success', code: 200 }, 'ServerError', 500, 'HTTP 500'],
    // A failure Status does, with or without its `status` field; a Status without kind only with status Failure.
    [500, { kind: 'Status', status: 'Failure', code: 410, reason: 'Gone', message: 'gone' }, 'Gone', 410, 'gone'],
    [500, { kind: 'Status', code: 429, message: 'slow down' }, 'TooManyRequests', 429, 'slow down'],
    [500, { status: 'Failure', code: 404, message: 'nope' }, 'NotFound', 404, 'nope'],
    [502, 'not json', 'ServerError', 502, 'HTTP 502'],
  ] as const)('HTTP %i with %j is %s (status %i)', (http, body, reason, status, message) => {
    const error = errorFromStatus(http, body, 'list');
    expect([error.reason, error.status, error.message]).toEqual([reason, status, message]);
    expect(error.statusObject).toBe(body);
  });
});

describe('the one status → reason mapping (client-go: k8s.io/apimachinery/pkg/api/errors)', () => {
  it.each([
    [400, undefined, 'BadRequest'],
    [401, undefined, 'Unauthorized'],
    [403, undefined, 'Forbidden'],
    [404, undefined, 'NotFound'],
    [409, undefined, 'Conflict'],
    // IsResourceExpired / IsGone: a 410 is the relist signal whatever its Status says.
    [410, undefined, 'Expired'],
    [410, 'Expired', 'Expired'],
    [410, 'Gone', 'Gone'],
    [422, undefined, 'Invalid'],
    [429, undefined, 'TooManyRequests'],
    [500, undefined, 'ServerError'],
    [503, undefined, 'ServerError'],
    // IsTimeout holds for a 504 (NewGenericServerResponse: StatusReasonTimeout).
    [504, undefined, 'Timeout'],
    [504, 'Timeout', 'Timeout'],
    [599, undefined, 'ServerError'],
    [418, undefined, 'Unknown'],
    [302, undefined, 'Unknown'],
  ] as const)('%i (Status reason %s) is %s', (status, statusReason, reason) => {
    expect(reasonForStatus(status, statusReason)).toBe(reason);
    expect(errorFromStatus(status, statusReason ? { kind: 'Status', code: status, reason: statusReason } : undefined, 'list').reason).toBe(
      reason,
    );
  });
});

describe('isResumable', () => {
  it('an HTTP/2 ProtocolError resumes a watch as a NetworkError does; a 410 or a malformed line does not', () => {
    expect(isResumable(new InformerError('ProtocolError', 'GOAWAY ENHANCE_YOUR_CALM'))).toBe(true);
    expect(isResumable(new InformerError('NetworkError', 'ECONNRESET'))).toBe(true);
    expect(isResumable(new InformerError('Expired', 'too old'))).toBe(false);
    expect(isResumable(new InformerError('MalformedLine', 'not JSON'))).toBe(false);
  });
});
