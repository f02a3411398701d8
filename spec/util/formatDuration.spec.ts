/**
 * The one duration formatter of messages (src/util/formatDuration.ts): the ListTooLong texts (minutes) and the
 * controller's abandoned-room report (whole seconds), whose specs pin some of these outputs too.
 */
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/util/formatDuration.ts';

describe('formatDuration', () => {
  it.each([
    [0, '0 s'],
    [1_234, '1.2 s'],
    [59_900, '59.9 s'],
    [59_960, '60 s'], // rounds up to the tenth, still under a minute's form
    [60_000, '1 min'],
    [65_000, '1 min 5 s'],
    [3_649_000, '60 min 49 s'], // the ListTooLong of docs/reliability.md
    [3_600_400, '60 min'],
  ] as const)('minutes: %i ms is %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(formatDuration(ms, 'minutes')).toBe(text);
  });

  it.each([
    [0, '0 s'],
    [1_499, '1 s'],
    [60_000, '60 s'], // "reported after 60 s": not "1 min"
    [65_000, '65 s'],
    [726_000, '726 s'],
  ] as const)('seconds: %i ms is %j', (ms, text) => {
    expect(formatDuration(ms, 'seconds')).toBe(text);
  });
});
