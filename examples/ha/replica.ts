/**
 * One replica of a small ConfigMap controller that reconciles only while it
 * leads. Prints one JSON line per change of leadership and per reconcile.
 * Usage: node examples/ha/replica.ts <kubeconfig> <identity>
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { EMPTY, Subscription, of, switchMap, timeout } from 'rxjs';
import { ConfigMap, informer } from '../../src/index.ts';
import { controller } from '../../src/controller/index.ts';
import { leaderElection } from '../../src/leaderelection/index.ts';
import { controllerFamilies, serve } from '../../src/metrics/index.ts';
import { timing } from './timing.ts';

// Unique per process: the pid is often 1 in every container.
const [file, identity = `${hostname()}-${randomUUID()}`] = process.argv.slice(2);
const kc = new KubeConfig();
kc.loadFromFile(file ?? '');
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ at: Date.now(), identity, ...event })}\n`);

const configMaps = informer(kc, ConfigMap, { namespace: 'demo' });
const apples = controller({
  name: 'demo',
  for: configMaps,
  reconcile: (key) => {
    say({ reconciled: key });
  },
});
const election = leaderElection(kc, { namespace: 'demo', name: 'ha-demo', identity, ...timing });

const running = new Subscription();
running.add(configMaps.store$.subscribe()); // the informer stays whole on every replica, leader or not
running.add(election.leader$.subscribe((leader) => say({ leader })));
running.add(election.errors$.subscribe((error) => say({ error: `${error.operation} ${error.reason}` })));
// Probes and metrics for the kubelet and Prometheus (in a pod: port 8080 on every interface).
running.add(
  serve([configMaps], { host: '127.0.0.1', port: 0, families: () => controllerFamilies([apples.metrics()]) }).subscribe((s) =>
    say({ serving: s.url }),
  ),
);
// The gating line: reconcile only while leader; losing leadership cancels in-flight reconciles (they are requeued).
// A reconcile's error is an outcome (never a warning): say it, or a failing reconcile is silent.
running.add(
  election.leader$.pipe(switchMap((leader) => (leader ? apples.outcomes$ : EMPTY))).subscribe((o) => {
    if (o.result === 'error' || o.result === 'terminal') say({ failed: o.key, result: o.result, cause: String(o.error) });
  }),
);

// SIGTERM (docs/replicas.md): drain, release the Lease, wait for the answer, exit. Draining first (stop() aborts the
// reconciles' signal and waits for them) means the next leader never starts a key this one still reconciles.
process.once('SIGTERM', () => {
  apples
    .stop()
    .pipe(
      timeout({ first: 20_000, with: () => of(undefined) }), // bounded: 20 s + the release's 25 s at worst, in a 50 s grace period
      switchMap(() => {
        running.unsubscribe(); // the last leader$ subscriber leaves: the Lease is released (holderIdentity "")
        return election.released$; // answered, refused or timed out
      }),
    )
    .subscribe({ complete: () => process.exit(0) });
});
