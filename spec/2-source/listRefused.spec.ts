/**
 * `listRefused`: the one rule for "these credentials may not make the initial list", shared by namespacesInformer's
 * per-namespace fallback and a dynamic factory's CRD watch (which leaves the factory's sync count).
 */
import { describe, expect, it } from 'vitest';
import { InformerError, type ErrorPhase, type ErrorReason } from '../../src/0-model/errors.ts';
import { listRefused } from '../../src/2-source/listRefused.ts';

const error = (reason: ErrorReason, phase: ErrorPhase | undefined) =>
  new InformerError(reason, `${reason} in ${phase}`, phase === undefined ? { status: 403 } : { phase, status: 403 });

describe('listRefused', () => {
  const table: readonly [ErrorReason, ErrorPhase | undefined, boolean, boolean, string][] = [
    ['Forbidden', 'list', false, true, 'a plain list refused'],
    ['Forbidden', 'watch', false, true, 'a streaming list refused (watchList: its initial events come on a watch)'],
    ['Forbidden', 'list', true, false, 'a relist refused after a good list: a lost permission, retried'],
    ['Forbidden', 'watch', true, false, 'a watch refused after a good list: retried'],
    ['Forbidden', 'decode', false, false, 'not a request'],
    ['Forbidden', undefined, false, false, 'no phase: not a request of the reflector'],
    ['Unauthorized', 'list', false, false, 'a 401: a credential the next request renews'],
    ['ServerError', 'watch', false, false, 'a transient fault'],
  ];
  for (const [reason, phase, listed, refused, why] of table)
    it(`${reason} in phase ${phase}, ${listed ? 'after' : 'before'} the first replace: ${refused} (${why})`, () => {
      expect(listRefused(error(reason, phase), listed)).toBe(refused);
    });
});
