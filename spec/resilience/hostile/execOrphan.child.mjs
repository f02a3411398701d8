// Child of exec.spec.ts: a list whose exec plugin (a shell that writes its pid to argv[2], then sleeps) is slower than
// the request's timeout; the caller gives up and the process ends by itself, the plugin still running for no request.
import { firstValueFrom } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap } from '../../../src/index.ts';
import { httpListWatch } from '../../../src/pipeline.ts';

const pidFile = process.argv[2];
const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
  users: [
    {
      name: 'u',
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: '/bin/sh',
        args: ['-c', `echo $$ > ${pidFile}; exec sleep 60`],
        interactiveMode: 'Never',
      },
    },
  ],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
});
try {
  await firstValueFrom(httpListWatch(kc, { resource: ConfigMap }, { requestTimeoutMs: 500 }).list({}));
} catch (error) {
  console.log(`list failed: ${error.message}`);
}
