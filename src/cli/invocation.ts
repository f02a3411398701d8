/**
 * How the CLI was run, so that advice names a command that works there: the installed bin
 * (`rx-informer start …`), `npx rx-informer …`, or `npm start` in this repository (`npm start -- …`),
 * where no `rx-informer` bin is on the PATH. Told from the environment npm gives the scripts it runs
 * (`npm_lifecycle_event`, `npm_package_name`, `npm_command`), never from paths.
 */
export type Invocation = 'bin' | 'npx' | 'npm start';

export function invocation(env: NodeJS.ProcessEnv = process.env): Invocation {
  // This repository's own `start` script (a project of yours whose start script runs the bin has another name).
  if (env['npm_lifecycle_event'] === 'start' && env['npm_package_name'] === 'rx-informer') return 'npm start';
  if (env['npm_command'] === 'exec') return 'npx';
  return 'bin';
}

/** `rx-informer start` with these arguments, as typed where the CLI runs (`npm start -- --kubeconfig …` in this repository). */
export function startCommand(args: string, how: Invocation = invocation()): string {
  const rest = args === '' ? '' : ` ${args}`;
  switch (how) {
    case 'npm start':
      return args === '' ? 'npm start' : `npm start --${rest}`;
    case 'npx':
      return `npx rx-informer start${rest}`;
    case 'bin':
      return `rx-informer start${rest}`;
  }
}

/** The pointer every usage error ends with: `rx-informer --help`, as typed where the CLI runs. */
export function usageHint(how: Invocation = invocation()): string {
  const help = how === 'npm start' ? 'npm start -- --help' : how === 'npx' ? 'npx rx-informer --help' : 'rx-informer --help';
  return `run \`${help}\` for usage`;
}
