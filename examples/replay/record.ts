/**
 * Records examples/replay/incident.jsonl from the API-server emulator (`node --conditions=rx-informer-source
 * examples/replay/record.ts`): a pod `web`, its watch dropped, a 500 on the resume; while the informer backs
 * off, `web` is deleted and re-created and the history compacted; the next resume gets 410 and the informer
 * relists. What `rx-informer record pods -o incident.jsonl` would have written in production.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { firstValueFrom, filter } from 'rxjs';
import { startApiServer } from 'rx-informer-emulator';
import { Pod, informer } from '../../src/index.ts';
import { httpListWatch, record, traceWriter } from '../../src/pipeline.ts';

const pod = (name: string) => ({ metadata: { name, namespace: 'shop' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
const until = async (check: () => boolean) => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
};

const api = await startApiServer({ namespaces: ['shop'], bookmarkIntervalMs: 60_000 });
api.create('pods', pod('web'));
api.create('pods', pod('db'));
let text = '';
const writer = traceWriter({ write: (line) => (text += line), resources: ['pods'], options: { namespace: 'shop' } });
const pods = informer(record(httpListWatch(api.kubeConfig, { resource: Pod, namespace: 'shop' }), writer), Pod, { namespace: 'shop' });
const subscription = pods.events$.subscribe();
await firstValueFrom(pods.synced$.pipe(filter(Boolean)));

const served = () => api.requests.filter((r) => r.watch && r.status === 500).length;
api.faults.add({ match: { watch: true }, fault: { type: 'status', code: 500 } });
api.closeWatches({ clean: false });
await until(() => served() === 1); // the resume failed: the informer backs off
api.delete('pods', 'shop', 'web');
api.create('pods', pod('web'));
api.compact();
const relisted = () => api.requests.filter((r) => !r.watch && r.path.endsWith('/pods')).length >= 2;
await until(relisted);
await firstValueFrom(
  pods.store$.pipe(filter((store) => store.get('shop/web')?.metadata.uid === api.get('pods', 'shop', 'web')?.metadata?.uid)),
);
subscription.unsubscribe();
writer.close();
await api.close();
writeFileSync(fileURLToPath(new URL('./incident.jsonl', import.meta.url)), text);
console.log(`wrote examples/replay/incident.jsonl: ${text.split('\n').length - 1} lines`);
