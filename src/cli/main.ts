#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { UsageError, watchCommand, type Terminal } from './watch.ts';

const HELP = `rx-informer — watch Kubernetes objects change, as a diff stream

Usage:
  rx-informer watch [RESOURCE...] [--all] [-n NAMESPACE] [-l SELECTOR] [--field-selector S]
                    [--kubeconfig PATH] [--context NAME] [--output pretty|json] [--webhook URL]
  rx-informer start [--kubeconfig PATH] [--context NAME] [watch options]
      With no --kubeconfig/--context: starts the built-in API-server emulator with live churn
      and injected faults, and watches everything on it. With one: \`watch --all\` on that cluster.

Resources are named by plural, singular, kind or short name (pods, pod, Pod, po; deployments.apps).

Options:
  --all                  every resource that can be listed and watched (custom resources too)
  -n, --namespace NS     one namespace (default: all namespaces)
  -l, --selector SEL     label selector, e.g. app=web,tier!=db
  --field-selector SEL   field selector, e.g. status.phase=Running
  --kubeconfig PATH      kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)
  --context NAME         kubeconfig context
  -o, --output FORMAT    pretty (default) or json (one JSON object per event)
  --webhook URL          also POST each event as JSON to URL (retried with backoff, never blocks)
  -h, --help             this text
`;

const options = {
  all: { type: 'boolean' },
  namespace: { type: 'string', short: 'n' },
  selector: { type: 'string', short: 'l' },
  'field-selector': { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', short: 'o', default: 'pretty' },
  webhook: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  'churn-interval': { type: 'string' },
} as const;

function loadKubeConfig(path: string | undefined, context: string | undefined): KubeConfig {
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

function terminal(): Terminal {
  const tty = process.stderr.isTTY;
  return {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    ...(tty ? { status: (line: string) => process.stderr.write(`\r\x1b[2K${line}`) } : {}),
  };
}

export async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...resources] = positionals;
  if (values.help || !command) {
    process.stdout.write(HELP);
    return values.help ? 0 : 2;
  }
  if (command !== 'watch' && command !== 'start') {
    process.stderr.write(`error: unknown command "${command}"\n\n${HELP}`);
    return 2;
  }
  if (values.output !== 'pretty' && values.output !== 'json') {
    process.stderr.write(`error: --output must be pretty or json, not "${values.output}"\n`);
    return 2;
  }
  const cleanup: (() => Promise<void>)[] = [];
  try {
    let kc: KubeConfig;
    const demo = command === 'start' && !values.kubeconfig && !values.context;
    if (demo) {
      const { startDemo } = await import('./demo.ts');
      const churnMs = values['churn-interval'] ? Number(values['churn-interval']) : undefined;
      const running = await startDemo({ log: (line) => process.stderr.write(line + '\n'), ...(churnMs ? { churnIntervalMs: churnMs } : {}) });
      cleanup.push(running.close);
      kc = running.kubeConfig;
    } else {
      kc = loadKubeConfig(values.kubeconfig, values.context);
    }
    const watching = await watchCommand(
      kc,
      {
        resources,
        all: values.all === true || command === 'start',
        namespace: values.namespace,
        labelSelector: values.selector,
        fieldSelector: values['field-selector'],
        output: values.output,
        webhook: values.webhook,
      },
      terminal(),
    );
    cleanup.unshift(watching.stop);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    return 0;
  } catch (error) {
    process.stderr.write(`error: ${error instanceof UsageError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  } finally {
    for (const step of cleanup) await step().catch(() => undefined);
  }
}

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
