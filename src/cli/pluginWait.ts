import { defer, retry, timer, type Observable, type SchedulerLike } from 'rxjs';
import { InformerError } from '../index.ts';
import { EXEC_RUN_TIMEOUT_MS } from '../1-transport/http/execAuth.ts';
import { monotonicScheduler } from '../util/monotonicNow.ts';

/**
 * The exec plugin a request timed out waiting for (`exec plugin kubelogin`), as the transport's Timeout carries it
 * ({@link InformerError.execPlugin}, set where the request's timer fires: requestStep.ts); undefined for any other
 * error. Such a request never reached the server: the plugin (a browser login, an MFA prompt) is still running.
 */
export function slowPlugin(error: unknown): string | undefined {
  if (!(error instanceof InformerError) || error.reason !== 'Timeout' || error.execPlugin === undefined) return undefined;
  return `exec plugin ${error.execPlugin}`;
}

/**
 * `attempt` (the CLI's first request, discovery), tried again while it times out waiting for an exec plugin that is still
 * running, up to the plugin's own bound ({@link EXEC_RUN_TIMEOUT_MS}, after which the transport kills it and says so):
 * giving up at the request's 30 s would exit, kill the plugin's process group and lose a half-done login. Each wait is
 * one line through `say`. Any other error, or one past the bound, is the caller's.
 */
export function waitingOnPlugin<T>(
  attempt: () => Observable<T>,
  say: (line: string) => void,
  scheduler: SchedulerLike = monotonicScheduler,
  boundMs: number = EXEC_RUN_TIMEOUT_MS,
): Observable<T> {
  return defer(() => {
    const startedAt = scheduler.now();
    return defer(attempt).pipe(
      retry({
        delay: (error: unknown) => {
          const plugin = slowPlugin(error);
          const waited = scheduler.now() - startedAt;
          if (plugin === undefined || waited >= boundMs) throw error;
          say(`waiting for the ${plugin} (still running, ${Math.floor(waited / 1000)} s)`);
          // The next request joins the run already going (execAuth.ts): nothing is started again.
          return timer(0, scheduler);
        },
      }),
    );
  });
}
