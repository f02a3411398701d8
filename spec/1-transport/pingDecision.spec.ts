/** The HTTP/2 PING rule as a pure function: what a firing timer decides, table by table. */
import { describe, expect, it } from 'vitest';
import {
  MAX_LATE_PINGS,
  pingDecision,
  PING_LAG_MARGIN_MS,
  type PingDecision,
  type PingTimerFired,
} from '../../src/1-transport/http2/health.ts';

const base = { readIdleMs: 5_000, lagMarginMs: PING_LAG_MARGIN_MS } as const;
const row = (fired: Omit<PingTimerFired, 'readIdleMs' | 'lagMarginMs'>, want: PingDecision, why: string) => ({
  fired: { ...base, ...fired },
  want,
  why,
});

const table = [
  // The read-idle timer.
  row({ timer: 'idle', now: 5_000, dueAt: 5_000, lastRead: 0 }, { action: 'ping' }, 'quiet for read-idle: PING'),
  row({ timer: 'idle', now: 5_000, dueAt: 5_000, lastRead: 2_000 }, { action: 'wait', delayMs: 2_000 }, 'a frame 3 s ago: wait the rest'),
  row({ timer: 'idle', now: 20_000, dueAt: 5_000, lastRead: 0 }, { action: 'ping' }, 'fired 15 s late (blocked loop): a PING, never death'),
  // The timeout of an unanswered PING.
  row({ timer: 'timeout', now: 10_000, dueAt: 10_000, lastRead: 0, sentAt: 5_000 }, { action: 'dead' }, 'on time, nothing read: dead'),
  row(
    { timer: 'timeout', now: 10_000 + PING_LAG_MARGIN_MS, dueAt: 10_000, lastRead: 0, sentAt: 5_000 },
    { action: 'dead' },
    'late by exactly the margin: still dead',
  ),
  row(
    { timer: 'timeout', now: 10_001 + PING_LAG_MARGIN_MS, dueAt: 10_000, lastRead: 0, sentAt: 5_000 },
    { action: 'ping', late: true },
    'late by more than the margin: a fresh PING and timeout',
  ),
  row(
    { timer: 'timeout', now: 25_000, dueAt: 10_000, lastRead: 0, sentAt: 5_000 },
    { action: 'ping', late: true },
    'blocked 15 s: a fresh PING',
  ),
  row(
    { timer: 'timeout', now: 32_000, dueAt: 30_000, lastRead: 0, sentAt: 25_000, latePings: 1 },
    { action: 'ping', late: true },
    'late again after one late PING, nothing read: one more',
  ),
  row(
    { timer: 'timeout', now: 39_000, dueAt: 37_000, lastRead: 0, sentAt: 32_000, latePings: MAX_LATE_PINGS },
    { action: 'dead' },
    'late every time and nothing read since: dead (a loop always late still finds a dead peer)',
  ),
  row(
    { timer: 'timeout', now: 39_000, dueAt: 37_000, lastRead: 33_000, sentAt: 32_000, latePings: MAX_LATE_PINGS },
    { action: 'ping' },
    'a frame read after the PING: a fresh PING, whatever came before',
  ),
  row(
    { timer: 'timeout', now: 10_000, dueAt: 10_000, lastRead: 7_000, sentAt: 5_000 },
    { action: 'ping' },
    'a frame after the PING: a fresh PING',
  ),
  row(
    { timer: 'timeout', now: 10_000, dueAt: 10_000, lastRead: 5_000, sentAt: 5_000 },
    { action: 'dead' },
    'a frame read as the PING went out is not an answer',
  ),
] as const;

describe('pingDecision', () => {
  it.each(table)('$why', ({ fired, want }) => {
    expect(pingDecision(fired)).toEqual(want);
  });
});
