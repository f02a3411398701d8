import { describe, expect, it } from 'vitest';
import { InformerError, MAX_STATUS_MESSAGE_CHARS, asStatus, capMessage, errorFromStatus, isResumable } from '../../src/0-model/errors.ts';

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

describe('isResumable', () => {
  it('an HTTP/2 ProtocolError resumes a watch as a NetworkError does; a 410 or a malformed line does not', () => {
    expect(isResumable(new InformerError('ProtocolError', 'GOAWAY ENHANCE_YOUR_CALM'))).toBe(true);
    expect(isResumable(new InformerError('NetworkError', 'ECONNRESET'))).toBe(true);
    expect(isResumable(new InformerError('Expired', 'too old'))).toBe(false);
    expect(isResumable(new InformerError('MalformedLine', 'not JSON'))).toBe(false);
  });
});
