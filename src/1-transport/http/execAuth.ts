import { readFileSync } from 'node:fs';
import { defer, finalize, map, Observable, of, share } from 'rxjs';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../../0-model/errors.ts';
import {
  EXEC_MAX_STDERR_BYTES,
  EXEC_MAX_STDOUT_BYTES,
  execInfo,
  interpret,
  isFresh,
  pluginEnv,
  type Credential,
  type ExecConfig,
} from './execCredential.ts';
import { runPlugin } from './execPlugin.ts';

// Exec credentials, cached and shared as client-go's exec Authenticator does: one credential per
// KubeConfig, user and plugin configuration, used until its expirationTimestamp has passed (none:
// until the server answers 401 to it); requests that need it while the plugin runs wait for that
// one run instead of starting their own. The run ends (its process group killed) when the last
// request waiting for it goes away: unsubscribed, or timed out.

export interface Slot {
  credential: Credential | undefined;
  running: Observable<Credential> | undefined;
}

const slots = new WeakMap<KubeConfig, Map<string, Slot>>();

/** A credential handed out, to name on a 401 (see {@link forgetCredential}). */
export interface IssuedCredential {
  readonly credential: Credential;
  readonly slot: Slot;
}

/** What a plugin run depends on: the user, the plugin's configuration, and the cluster it is told about. */
function slotOf(kc: KubeConfig, user: string, config: ExecConfig, cluster: Cluster | null): Slot {
  let byKey = slots.get(kc);
  if (!byKey) slots.set(kc, (byKey = new Map()));
  const key = JSON.stringify([user, config, config.provideClusterInfo ? cluster : null]);
  let slot = byKey.get(key);
  if (!slot) byKey.set(key, (slot = { credential: undefined, running: undefined }));
  return slot;
}

/**
 * The exec credential for `user`: the cached one while it is fresh, else the one the plugin prints
 * (joining a run already going). Errors with a `CredentialPlugin` InformerError when the run fails.
 */
export function execCredential(kc: KubeConfig, user: string, config: ExecConfig, cluster: Cluster | null): Observable<IssuedCredential> {
  const slot = slotOf(kc, user, config, cluster);
  return defer(() => {
    const cached = slot.credential;
    if (cached && isFresh(cached, Date.now())) return of({ credential: cached, slot });
    slot.running ??= startRun(slot, config, cluster);
    return slot.running.pipe(map((credential) => ({ credential, slot })));
  });
}

function startRun(slot: Slot, config: ExecConfig, cluster: Cluster | null): Observable<Credential> {
  const previous = slot.credential;
  slot.credential = undefined;
  const known = [previous?.token, previous?.key].filter((s): s is string => s !== undefined);
  const run = defer(() =>
    runPlugin({
      command: config.command,
      args: config.args,
      env: pluginEnv(config, process.env, execInfo(config, cluster, config.provideClusterInfo ? caDataOf(cluster) : undefined)),
      maxStdoutBytes: EXEC_MAX_STDOUT_BYTES,
      maxStderrBytes: EXEC_MAX_STDERR_BYTES,
    }),
  );
  return run.pipe(
    map((result) => {
      const credential = interpret(result, config, known);
      if (credential instanceof InformerError) throw credential;
      slot.credential = credential;
      return credential;
    }),
    finalize(() => (slot.running = undefined)),
    // One run for every request waiting; the last one to go away ends it.
    share(),
  );
}

/** The cluster's CA as bytes, for KUBERNETES_EXEC_INFO (unreadable: left out; the request itself will say why). */
function caDataOf(cluster: Cluster | null): Buffer | undefined {
  try {
    if (cluster?.caFile) return readFileSync(cluster.caFile);
    if (cluster?.caData) return Buffer.from(cluster.caData, 'base64');
  } catch {
    // reported when the request reads it
  }
  return undefined;
}

/**
 * The server answered 401 to a request made with `issued`: the next request runs the plugin again,
 * unless the credential was replaced meanwhile (client-go's maybeRefreshCreds).
 */
export function forgetCredential(issued: IssuedCredential): void {
  if (issued.slot.credential === issued.credential) issued.slot.credential = undefined;
}
