import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
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
import { execConfigSecrets } from './secretNames.ts';

// Exec credentials, cached and shared as client-go's exec Authenticator does: one credential per
// KubeConfig, user and plugin configuration, used until its expirationTimestamp has passed (none:
// until the server answers 401 to it); requests that need it while the plugin runs wait for that
// one run instead of starting their own. As in client-go (which runs the command to completion under
// its mutex), the run is not tied to the requests: one that times out leaves it running, and what it
// prints is cached for the next request. A plugin slower than `requestTimeoutMs` would otherwise be
// killed at every retry and never yield. Its own bound is {@link EXEC_RUN_TIMEOUT_MS}.

/**
 * How long one plugin run may take before its process group is killed (`CredentialPlugin`): kubelogin's own
 * default for a browser login (`--authentication-timeout-sec`, 180 s), the slowest well-behaved plugin known; a
 * cold `aws eks get-token` or `gke-gcloud-auth-plugin` takes seconds. client-go has no bound (a hung plugin hangs it).
 */
export const EXEC_RUN_TIMEOUT_MS = 180_000;

/** One plugin run: what it ends with, and how many requests wait for it now. */
interface Run {
  readonly result: Promise<Credential | InformerError>;
  waiters: number;
  /** Whether the plugin keeps the process alive: while some request waits for it (one left alone does not). */
  hold(held: boolean): void;
}

export interface Slot {
  credential: Credential | undefined;
  running: Run | undefined;
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
 * The exec credential for `user`: the cached one while it is fresh, else the one the plugin prints (joining a run
 * already going; `ca`: the cluster's CA bytes, for KUBERNETES_EXEC_INFO). Rejects with a `CredentialPlugin`
 * InformerError when the run fails, and when `signal` aborts first (then the run goes on, for the next request).
 */
export async function execCredential(
  kc: KubeConfig,
  user: string,
  config: ExecConfig,
  cluster: Cluster | null,
  ca: Buffer | undefined,
  signal: AbortSignal,
): Promise<IssuedCredential> {
  const slot = slotOf(kc, user, config, cluster);
  const cached = slot.credential;
  if (cached && isFresh(cached, Date.now())) return { credential: cached, slot };
  if (signal.aborted) throw new Error('aborted');
  const run = (slot.running ??= startRun(slot, config, cluster, ca));
  if (run.waiters++ === 0) run.hold(true);
  let onAbort: (() => void) | undefined;
  try {
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', (onAbort = () => reject(new Error('aborted')))));
    const answer = await Promise.race([run.result, aborted]);
    if (answer instanceof InformerError) throw answer;
    return { credential: answer, slot };
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    if (--run.waiters === 0) run.hold(false);
  }
}

function startRun(slot: Slot, config: ExecConfig, cluster: Cluster | null, ca: Buffer | undefined): Run {
  const previous = slot.credential;
  slot.credential = undefined;
  const known = knownSecrets(config, previous);
  let child: ChildProcess | undefined;
  let held = true;
  const hold = (on: boolean) => {
    held = on;
    if (!child) return;
    for (const handle of [child, child.stdout as Socket | null, child.stderr as Socket | null]) {
      if (on) handle?.ref?.();
      else handle?.unref?.();
    }
  };
  const result = new Promise<Credential | InformerError>((resolve) => {
    let done = false;
    const deadline = setTimeout(() => {
      if (done) return;
      done = true;
      subscription.unsubscribe(); // kills the group
      const took = `no credential within ${EXEC_RUN_TIMEOUT_MS / 1000} s (EXEC_RUN_TIMEOUT_MS); killed it`;
      resolve(new InformerError('CredentialPlugin', `exec plugin ${config.command}: ${took}`, { phase: 'config' }));
    }, EXEC_RUN_TIMEOUT_MS);
    // The requests waiting keep the process alive (their timers, the plugin held); the deadline alone does not.
    deadline.unref?.();
    const subscription = runPlugin({
      command: config.command,
      args: config.args,
      env: pluginEnv(config, process.env, execInfo(config, cluster, config.provideClusterInfo ? ca : undefined)),
      maxStdoutBytes: EXEC_MAX_STDOUT_BYTES,
      maxStderrBytes: EXEC_MAX_STDERR_BYTES,
      started: (spawned) => {
        child = spawned;
        hold(held);
      },
    }).subscribe((ended) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      resolve(interpret(ended, config, known));
    });
  }).then((answer) => {
    if (!(answer instanceof InformerError)) slot.credential = answer;
    slot.running = undefined;
    return answer;
  });
  const run: Run = { result, waiters: 0, hold };
  return run;
}

/**
 * What a failure message must not quote besides what the plugin printed: the credential it gave last, and the secrets
 * its kubeconfig hands it ({@link execConfigSecrets}: secret-named env and flag values, token-like values).
 */
export function knownSecrets(config: ExecConfig, previous: Credential | undefined): string[] {
  const given = execConfigSecrets(config.command, config.args, config.env);
  return [previous?.token, previous?.key, ...given].filter((s): s is string => s !== undefined);
}

/**
 * The server answered 401 to a request made with `issued`: the next request runs the plugin again,
 * unless the credential was replaced meanwhile (client-go's maybeRefreshCreds).
 */
export function forgetCredential(issued: IssuedCredential): void {
  if (issued.slot.credential === issued.credential) issued.slot.credential = undefined;
}
