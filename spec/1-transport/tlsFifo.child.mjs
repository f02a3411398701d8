// Child of tlsFiles.spec.ts: one list with a kubeconfig whose certificate-authority (argv[3] `ca`) or client-certificate
// and client-key (`cert`) file is a FIFO nobody writes to (argv[2], made here). Prints what the request said and
// whether the event loop turned meanwhile; with a blocking read it hangs instead (the parent kills it).
import { execFileSync } from 'node:child_process';
import { firstValueFrom } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap } from '../../src/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { TEST_TLS_CERT } from 'rx-informer-emulator';

const [fifo, which] = process.argv.slice(2);
execFileSync('mkfifo', [fifo]);
const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [
    {
      name: 'c',
      server: 'https://127.0.0.1:1',
      ...(which === 'ca' ? { caFile: fifo } : { caData: Buffer.from(TEST_TLS_CERT).toString('base64') }),
    },
  ],
  users: [{ name: 'u', ...(which === 'cert' ? { certFile: fifo, keyFile: fifo } : {}) }],
  contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
  currentContext: 'c',
});
let beats = 0;
const beat = setInterval(() => beats++, 1);
const request = firstValueFrom(httpListWatch(kc, { resource: ConfigMap }).list({})).then(
  () => 'listed',
  (e) => `${e.reason}: ${e.message}`,
);
await new Promise((resolve) => setTimeout(resolve, 20)); // the loop turns while the request is out
const said = await request;
clearInterval(beat);
process.stdout.write(JSON.stringify({ said, beating: beats > 0 }));
process.exit(0);
