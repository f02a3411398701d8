import { AsyncLocalStorage } from 'node:async_hooks';
import type { KubeConfig, User } from '@kubernetes/client-node';

// Exec credentials. client-node's ExecAuth keeps a credential without an
// `expirationTimestamp` for the life of the process and gives a plugin no
// deadline; both are private, so they are reached structurally here.

/** The parts of client-node's (private) ExecAuth this transport relies on. */
interface ExecAuthInternals {
  tokenCache: Record<string, unknown>;
  execFn: (command: string, args?: readonly string[], options?: object) => unknown;
  isAuthProvider(user: User): boolean;
}

function isExecAuth(value: unknown): value is ExecAuthInternals {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof ExecAuthInternals, unknown>>;
  return (
    typeof candidate.tokenCache === 'object' &&
    candidate.tokenCache !== null &&
    typeof candidate.execFn === 'function' &&
    typeof candidate.isAuthProvider === 'function'
  );
}

function execAuthsOf(kc: KubeConfig): ExecAuthInternals[] {
  const { authenticators } = kc as unknown as { authenticators?: unknown };
  return Array.isArray(authenticators) ? authenticators.filter(isExecAuth) : [];
}

/** The signal of the request whose credentials are being obtained (an exec plugin spawned now belongs to it). */
export const credentialsFor = new AsyncLocalStorage<AbortSignal>();
const killable = new WeakSet<ExecAuthInternals>();

/**
 * Makes exec plugins spawned while a request obtains its credentials end with
 * that request: a plugin that hangs is killed when the request times out or is
 * unsubscribed, instead of one more stuck process per retry.
 */
export function killPluginsWithTheirRequest(kc: KubeConfig): void {
  for (const auth of execAuthsOf(kc)) {
    if (killable.has(auth)) continue;
    const spawn = auth.execFn.bind(auth);
    auth.execFn = (command, args, options) => {
      const signal = credentialsFor.getStore();
      return spawn(command, args, signal ? { ...options, signal } : options);
    };
    killable.add(auth);
  }
}

/**
 * Drops the exec credential client-node cached for the current user, so that
 * the next request runs the plugin again (client-go does the same on a 401).
 */
export function forgetExecCredential(kc: KubeConfig): void {
  const user = kc.getCurrentUser();
  if (!user) return;
  for (const auth of execAuthsOf(kc)) if (auth.isAuthProvider(user)) delete auth.tokenCache[user.name];
}
