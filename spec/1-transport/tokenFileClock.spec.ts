/**
 * The token file's one-minute re-read is timed by the monotonic clock, as every duration (docs/operations.md,
 * "Clocks"): a wall-clock step back of an hour does not keep a rotated token unread for that hour (audit23: it was
 * `Date.now()`). The clocks are stubbed: `performance.now()` (the monotonic clock) and `Date.now()` (the wall clock).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tokenFromFile, TOKEN_FILE_PERIOD_MS } from '../../src/1-transport/http/tokenFile.ts';

function clocks() {
  const at = { wall: 1_800_000_000_000, mono: 1_000_000 };
  vi.spyOn(Date, 'now').mockImplementation(() => at.wall);
  vi.spyOn(performance, 'now').mockImplementation(() => at.mono);
  return at;
}

function tokenFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rx-token-')), 'token');
  writeFileSync(file, 'old');
  return file;
}

describe('the token file is read again a minute later by the monotonic clock (audit23)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('61 s later with the wall clock stepped back an hour: the rotated token is read', async () => {
    const at = clocks();
    const file = tokenFile();
    const kc = new KubeConfig();
    expect((await tokenFromFile(kc, file)).token).toBe('old');
    writeFileSync(file, 'rotated');
    at.mono += TOKEN_FILE_PERIOD_MS + 1_000;
    at.wall += TOKEN_FILE_PERIOD_MS + 1_000 - 3_600_000; // NTP steps the wall clock back an hour
    expect((await tokenFromFile(kc, file)).token).toBe('rotated');
  });

  it('the wall clock stepped forward an hour, 1 s later: the last token still (no early re-read)', async () => {
    const at = clocks();
    const file = tokenFile();
    const kc = new KubeConfig();
    expect((await tokenFromFile(kc, file)).token).toBe('old');
    writeFileSync(file, 'rotated');
    at.mono += 1_000;
    at.wall += 3_600_000;
    expect((await tokenFromFile(kc, file)).token).toBe('old');
  });
});
