/**
 * `rx-informer start` without a kubeconfig runs the built-in demo on rx-informer-emulator, which rx-informer
 * does not depend on (an optional peer): the CLI loads it by name at run time, and says what to do when it is
 * not installed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import * as emulatorPackage from 'rx-informer-emulator';
import { EMULATOR_PACKAGE, loadEmulator, type DemoEmulator } from '../../src/cli/demo.ts';
import { cli, expectNoStack, killAll } from './support.ts';

// Compile-time: the package gives the demo what it uses (tsc fails here when the two drift apart).
const satisfies: DemoEmulator = emulatorPackage;

const nodeOptions = (option: string) => ({ NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} ${option}`.trim() });
/** As `npm start` runs the CLI in this repository: the emulator from its TypeScript sources. */
const SOURCES = nodeOptions('--conditions=rx-informer-source');
const WITHOUT_EMULATOR = nodeOptions(`--import=${pathToFileURL(new URL('./withoutEmulator.ts', import.meta.url).pathname).href}`);

afterAll(() => killAll());

describe('rx-informer start (the built-in demo)', () => {
  it('loads rx-informer-emulator by its name', async () => {
    expect(EMULATOR_PACKAGE).toBe('rx-informer-emulator');
    const loaded = await loadEmulator();
    expect(loaded?.startApiServer).toBe(satisfies.startApiServer);
  });

  it('runs the demo: the emulator with live churn, watched until Ctrl-C', async () => {
    const c = cli(['start', '--churn-interval', '50'], SOURCES);
    await c.line('err', /^rx-informer demo: API-server emulator on http:\/\/127\.0\.0\.1:\d+ with live churn and injected faults$/);
    // Installed, the advice is the bin's command (`npm start -- …` only works inside this repository).
    await c.line('err', /^\(point it at a real cluster with: rx-informer start --kubeconfig ~\/\.kube\/config\)$/);
    await c.line('out', /^\d\d:\d\d:\d\d (ADDED|UPDATED|DELETED) /, 30_000);
    c.proc.kill('SIGINT');
    expect((await c.exit).code).toBe(130);
  });

  it('run by `npm start` in this repository, its advice and usage pointer say `npm start -- …`', async () => {
    const NPM_START = { ...SOURCES, npm_lifecycle_event: 'start', npm_package_name: 'rx-informer', npm_command: 'start' };
    const c = cli(['start', '--churn-interval', '50'], NPM_START);
    await c.line('err', /^\(point it at a real cluster with: npm start -- --kubeconfig ~\/\.kube\/config\)$/);
    c.proc.kill('SIGINT');
    expect((await c.exit).code).toBe(130);
    const bad = cli(['start', '--bogus'], NPM_START);
    expect((await bad.exit).code).toBe(2);
    expect(bad.err).toEqual(['error: unknown option --bogus', 'run `npm start -- --help` for usage']);
  });

  it('without rx-informer-emulator installed: one line that says to install it or pass --kubeconfig, exit 2', async () => {
    const c = cli(['start'], WITHOUT_EMULATOR);
    const { code } = await c.exit;
    expect(c.err).toEqual([
      'error: install rx-informer-emulator to run the built-in demo (npm install rx-informer-emulator), or pass --kubeconfig',
    ]);
    expect(code).toBe(2);
    expectNoStack(c.raw());
  });
});
