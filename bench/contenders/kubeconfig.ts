import { KubeConfig } from '@kubernetes/client-node';

/** A KubeConfig for the workload server (client-node 2.x refuses http: servers without skipTLSVerify). */
export function benchKubeConfig(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'u' }],
    currentContext: 'bench',
  });
  return kc;
}
