import type { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { lstatSync, readlinkSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

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
  /** `--write-kubeconfig`: a kubeconfig for the emulator is written here once it listens (see {@link writeKubeconfigFile}). */
  readonly writeKubeconfig?: string;
  /** The command that watches with a kubeconfig file, as typed where the CLI runs (default `rx-informer watch --all --kubeconfig FILE`). */
  readonly watchWith?: (file: string) => string;
}

/** Where a dangling symbolic link points (resolved against its own directory); undefined when `file` is no link. */
function danglingTarget(file: string): string | undefined {
  try {
    if (!lstatSync(file).isSymbolicLink()) return undefined;
    return resolve(dirname(file), readlinkSync(file));
  } catch {
    return undefined;
  }
}

/**
 * Writes `kc` (its cluster's URL and CA, its user's token or certificate: `exportConfig()`, JSON, which kubectl and
 * client-node read as YAML) to `file`, as `record` and `trim` write theirs: a file there is replaced. Readable by its
 * owner only (0600: it may hold a token), and whole or not at all: written beside it, then renamed onto it, so that a
 * reader in another terminal never loads half of one. A symbolic link stays one; the file it names gets it.
 */
export function writeKubeconfigFile(file: string, kc: KubeConfig): void {
  // A symbolic link stays one: its target is written, even a target not there yet (a dangling link).
  let path = file;
  try {
    path = realpathSync(file);
  } catch {
    path = danglingTarget(file) ?? file;
  }
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, `${kc.exportConfig()}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new Error(`--write-kubeconfig ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
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
  if (options.writeKubeconfig !== undefined) {
    try {
      writeKubeconfigFile(options.writeKubeconfig, api.kubeConfig);
    } catch (error) {
      await api.close();
      throw error;
    }
  }
  options.log(`rx-informer demo: API-server emulator on ${api.url} with live churn and injected faults`);
  if (options.writeKubeconfig !== undefined) {
    const watchWith = options.watchWith ?? ((file: string) => `rx-informer watch --all --kubeconfig ${file}`);
    options.log(`(its kubeconfig is in ${options.writeKubeconfig}: ${watchWith(options.writeKubeconfig)}, or kubectl --kubeconfig)`);
  }
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
