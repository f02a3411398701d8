/**
 * Advice names a command that works where the CLI runs: the installed bin, npx, or `npm start` in this
 * repository (told from the environment npm gives its scripts).
 */
import { describe, expect, it } from 'vitest';
import { invocation, startCommand, usageHint, watchCommand, type Invocation } from '../../src/cli/invocation.ts';
import { parseCommandLine } from '../../src/cli/args.ts';
import { readKubeConfig } from '../../src/cli/kubeconfig.ts';

const NPM_START = { npm_lifecycle_event: 'start', npm_package_name: 'rx-informer', npm_command: 'start' };

describe('where the CLI runs', () => {
  it.each<[string, NodeJS.ProcessEnv, Invocation]>([
    ['the installed bin, from a shell', {}, 'bin'],
    ['`npm start` in this repository', NPM_START, 'npm start'],
    ['`npm run start` in this repository', { ...NPM_START, npm_command: 'run-script' }, 'npm start'],
    ['`npm run cli` in this repository', { ...NPM_START, npm_lifecycle_event: 'cli', npm_command: 'run-script' }, 'npm run cli'],
    ["a project's own cli script", { npm_lifecycle_event: 'cli', npm_package_name: 'my-operator' }, 'bin'],
    ["a project's own start script that runs the bin", { ...NPM_START, npm_package_name: 'my-operator' }, 'bin'],
    ['npx rx-informer', { npm_command: 'exec', npm_lifecycle_event: 'npx' }, 'npx'],
    ['the bin from a test script of this repository', { npm_lifecycle_event: 'test', npm_package_name: 'rx-informer' }, 'bin'],
  ])('%s', (_, env, how) => expect(invocation(env)).toBe(how));

  it.each<[Invocation, string, string, string]>([
    ['bin', 'rx-informer start --kubeconfig ~/.kube/config', 'rx-informer watch pods', 'run `rx-informer --help` for usage'],
    ['npx', 'npx rx-informer start --kubeconfig ~/.kube/config', 'npx rx-informer watch pods', 'run `npx rx-informer --help` for usage'],
    ['npm start', 'npm start -- --kubeconfig ~/.kube/config', 'npm run cli -- watch pods', 'run `npm start -- --help` for usage'],
    ['npm run cli', 'npm start -- --kubeconfig ~/.kube/config', 'npm run cli -- watch pods', 'run `npm run cli -- --help` for usage'],
  ])('%s: %s; %s; %s', (how, start, watch, hint) => {
    expect(startCommand('--kubeconfig ~/.kube/config', how)).toBe(start);
    expect(watchCommand('pods', how)).toBe(watch);
    expect(usageHint(how)).toBe(hint);
  });

  it('`npm start -- watch pods` (which runs `start watch pods`) is pointed at a watch that runs there, without a second `watch`', () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, NPM_START);
      expect(parseCommandLine(['start', 'watch', 'pods'])).toMatchObject({
        kind: 'usage',
        message: expect.stringMatching(/use `npm run cli -- watch pods`$/),
      });
      expect(parseCommandLine(['start', 'podz'])).toMatchObject({
        kind: 'usage',
        message: expect.stringMatching(/use `npm run cli -- watch podz`$/),
      });
      expect(parseCommandLine(['start', 'watch'])).toMatchObject({
        kind: 'usage',
        message: expect.stringMatching(/use `npm run cli -- watch RESOURCE\.\.\.`$/),
      });
    } finally {
      for (const key of Object.keys(NPM_START)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });

  it('no kubeconfig at all: the built-in emulator is offered as it is started there', () => {
    const none = { serviceAccountToken: '/nonexistent/token' };
    const message = (env: NodeJS.ProcessEnv) => {
      try {
        readKubeConfig(undefined, undefined, undefined, { ...none, env: { HOME: '/nonexistent', ...env } });
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(message({})).toMatch(/or run `rx-informer start` without options for the built-in emulator$/);
    expect(message(NPM_START)).toMatch(/or run `npm start` without options for the built-in emulator$/);
  });
});
