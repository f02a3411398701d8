import type { InformerError } from '../0-model/errors.ts';

/**
 * Whether an error says these credentials may not make the initial list (a 403 before the first `replace`): a plain
 * list's in phase `list`, a streaming list's (`watchList`) in phase `watch`, for the initial events come on a watch
 * request. Before the first `replace` no other watch has been opened (a list's watch starts after its `replace`), so
 * a 403 on a watch is a streaming list's. After it, a 403 is a lost permission, not a refused list: the reflector
 * retries it (client-go's reflector backs off and lists again), and those who switch on a refused list
 * (`namespacesInformer`'s per-namespace fallback, a dynamic factory's CRD watch leaving its sync count) do not.
 */
export function listRefused(error: InformerError, listed: boolean): boolean {
  return !listed && error.reason === 'Forbidden' && (error.phase === 'list' || error.phase === 'watch');
}
