import { describe, expect, it } from 'vitest';
import { InformerError, type ErrorReason } from '../../src/0-model/errors.ts';
import { healthStep, initialHealth, type HealthInput, type HealthState } from '../../src/5-informer/health.ts';

/** Health's rules, row by row: from a state, one informer step at t = 5, what follows. */
const T = 5;
const running: HealthState = { ...initialHealth(0), first: false, synced: true, resourceVersion: '1' };
const step = (s: HealthInput['step'], ...errors: InformerError[]): HealthInput => ({ step: s, synced: true, resourceVersion: '1', errors });
const error = (reason: ErrorReason, phase: 'list' | 'watch' | 'handler' = 'watch') => new InformerError(reason, reason, { phase });
const failing: Partial<HealthState> = { failures: 2, failingSince: 1, lastFailure: 'ServerError' };

const rows: [string, Partial<HealthState>, HealthInput, Partial<HealthState>][] = [
  // Opening a watch is not watching.
  ['a watch opened after a list', {}, step('watch'), { watch: 'opening', watching: false }],
  ['a watch opened after failures', { ...failing }, step('watch'), { watch: 'opening', watching: false, failures: 2 }],
  // Accepted: a frame came from it.
  ['its first event', { watch: 'opening' }, step('event'), { watch: 'accepted', watching: true, since: T, lastEventAt: T }],
  [
    'its first bookmark',
    { watch: 'opening', ...failing },
    step('bookmark'),
    { watch: 'accepted', watching: true, failures: 0, failingSince: undefined },
  ],
  ['a streaming list completed on it', { watch: 'opening' }, step('replace'), { watch: 'accepted', watching: true }],
  ['a bad object in it', { watch: 'opening' }, step('error', error('ValidationFailed')), { watch: 'accepted', watching: true }],
  ['a notice with it', { watch: 'opening' }, step('error', error('NotAcceptable')), { watch: 'accepted', watching: true }],
  [
    'a handler throwing meanwhile (proves nothing)',
    { watch: 'opening' },
    step('error', error('HandlerError', 'handler')),
    { watch: 'opening', watching: false },
  ],
  ['a list (not a watch)', { watch: 'none' }, step('replace'), { watch: 'none', watching: false, lastEventAt: T }],
  // Refused or broken.
  [
    'the watch refused (503)',
    { watch: 'opening' },
    step('error', error('ServerError')),
    { watch: 'none', watching: false, failures: 1, failingSince: T, lastFailure: 'ServerError' },
  ],
  [
    'an accepted watch broken',
    { watch: 'accepted', watching: true, since: 1 },
    step('error', error('NetworkError')),
    { watch: 'none', watching: false, since: T, failures: 1 },
  ],
  [
    'a run of failures goes on',
    { ...failing },
    step('error', error('Timeout', 'list')),
    { failures: 3, failingSince: 1, lastFailure: 'Timeout' },
  ],
  // A watch that ended without failing was accepted: the next one is a resume.
  [
    'resumed after an accepted watch',
    { watch: 'accepted', watching: true, since: 1 },
    step('watch'),
    { watch: 'resumed', watching: true, since: 1 },
  ],
  [
    'resumed after a quiet watch the idle rule ended',
    { watch: 'opening', ...failing },
    step('watch'),
    { watch: 'resumed', watching: true, since: T, failures: 0, failingSince: undefined },
  ],
  ['a resumed watch refused', { watch: 'resumed', watching: true }, step('error', error('Forbidden')), { watch: 'none', watching: false }],
  [
    'a resumed watch bringing an event',
    { watch: 'resumed', watching: true, since: 1 },
    step('event'),
    { watch: 'accepted', watching: true, since: 1 },
  ],
  ['a resync tick', { watch: 'opening' }, step('resync'), { watch: 'opening', watching: false }],
];

describe('healthStep (pure)', () => {
  it.each(rows)('%s', (_, from, input, expected) => {
    expect(healthStep({ ...running, ...from }, input, T)).toMatchObject(expected);
  });

  it('takes a running informer replayed at subscription as watching (its past is not known)', () => {
    expect(healthStep(initialHealth(0), step('event'), T)).toMatchObject({ watching: true, watch: 'accepted', first: false });
    expect(healthStep(initialHealth(0), { ...step('watch'), synced: false }, T)).toMatchObject({ watching: false, watch: 'none' });
  });
});
