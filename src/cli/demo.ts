import type { KubeConfig } from '@kubernetes/client-node';

/**
 * The package the built-in demo runs on. rx-informer does not depend on it (an optional peer): the CLI imports
 * it only for `rx-informer start` without a kubeconfig, by a name in a variable so that neither the compiler nor
 * a bundler pulls it into the library.
 */
export const EMULATOR_PACKAGE: string = 'rx-informer-emulator';

export const EMULATOR_MISSING = `install ${EMULATOR_PACKAGE} to run the built-in demo (npm install ${EMULATOR_PACKAGE}), or pass --kubeconfig`;

/** A custom resource definition, as the emulator takes it (opaque here). */
type DemoResource = object;

/** The emulator's server, as far as the demo uses it. */
export interface DemoServer {
  readonly url: string;
  readonly kubeConfig: KubeConfig;
  registerCustomResource(spec: DemoResource): unknown;
  close(): Promise<void>;
}

/**
 * What the demo uses of rx-informer-emulator; spec/cli/demo.spec.ts checks at compile time that the package
 * satisfies it.
 */
export interface DemoEmulator {
  readonly MY_APPLES: DemoResource;
  startApiServer(): Promise<DemoServer>;
  startChurn(
    api: DemoServer,
    options: { intervalMs: number; seed: number; faultEvery: number; onFault: (description: string) => void },
  ): { stop(): void };
}

/** The emulator package, or undefined when it is not installed. Any other failure to load it is thrown. */
export async function loadEmulator(specifier: string = EMULATOR_PACKAGE): Promise<DemoEmulator | undefined> {
  try {
    return (await import(specifier)) as DemoEmulator;
  } catch (error) {
    const missing =
      error instanceof Error &&
      (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      error.message.includes(`package '${specifier}'`);
    if (missing) return undefined;
    throw error;
  }
}

export interface DemoOptions {
  readonly log: (line: string) => void;
  readonly churnIntervalMs?: number;
  /** A fault every this many writes (default 12: about every 6 s at the default churn interval). */
  readonly faultEvery?: number;
  /** The command that watches a real cluster, as typed where the CLI runs (default `rx-informer start --kubeconfig ~/.kube/config`). */
  readonly realCluster?: string;
}

/**
 * `rx-informer start` (`npm start` in this repository) with no kubeconfig: the built-in API-server emulator, seeded and
 * churning (pods, deployments and a custom resource across three namespaces),
 * with an occasional fault injected into the open watches, so each fault
 * (`! pods: …`) and the resumed stream show within seconds. Bookmarks and
 * timeouts keep kube-apiserver's timing. `emulator`: the loaded rx-informer-emulator (default: load it here).
 */
export async function startDemo(
  options: DemoOptions,
  emulator?: DemoEmulator,
): Promise<{ kubeConfig: KubeConfig; close: () => Promise<void> }> {
  const loaded = emulator ?? (await loadEmulator());
  if (loaded === undefined) throw new Error(EMULATOR_MISSING);
  const { MY_APPLES, startApiServer, startChurn } = loaded;
  const api = await startApiServer();
  api.registerCustomResource(MY_APPLES);
  options.log(`rx-informer demo: API-server emulator on ${api.url} with live churn and injected faults`);
  options.log(`(point it at a real cluster with: ${options.realCluster ?? 'rx-informer start --kubeconfig ~/.kube/config'})`);
  const churn = startChurn(api, {
    intervalMs: options.churnIntervalMs ?? 500,
    seed: 40,
    faultEvery: options.faultEvery ?? 12,
    onFault: (description) => options.log(`~ emulator: injecting ${description}`),
  });
  return {
    kubeConfig: api.kubeConfig,
    close: async () => {
      churn.stop();
      await api.close();
    },
  };
}
