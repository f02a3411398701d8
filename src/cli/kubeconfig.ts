import { KubeConfig } from '@kubernetes/client-node';
import { UsageError } from './watch.ts';

/** The kubeconfig to use, or a UsageError that says what is wrong with it. */
export function loadKubeConfig(path: string | undefined, context: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (error) {
    throw new UsageError(`cannot load kubeconfig${path ? ` ${path}` : ''}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (context) {
    if (!kc.getContextObject(context)) throw new UsageError(`the kubeconfig has no context "${context}" (it has: ${kc.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentCluster()) throw new UsageError('the kubeconfig names no current cluster (set a current-context or pass --context)');
  return kc;
}
