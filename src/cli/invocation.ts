/**
 * How the CLI was run, so that advice names a command that works there: the installed bin
 * (`rx-informer start …`), `npx rx-informer …`, or `npm start` / `npm run cli` in this repository
 * (`npm start -- …`, `npm run cli -- watch …`), where no `rx-informer` bin is on the PATH. Told from the
 * environment npm gives the scripts it runs (`npm_lifecycle_event`, `npm_package_name`, `npm_command`), never from paths.
 */
export type Invocation = 'bin' | 'npx' | 'npm start' | 'npm run cli';

export function invocation(env: NodeJS.ProcessEnv = process.env): Invocation {
  // This repository's own scripts (a project of yours whose start script runs the bin has another name).
  if (env['npm_package_name'] === 'rx-informer') {
    if (env['npm_lifecycle_event'] === 'start') return 'npm start';
    if (env['npm_lifecycle_event'] === 'cli') return 'npm run cli';
  }
  if (env['npm_command'] === 'exec') return 'npx';
  return 'bin';
}

/** `rx-informer start` with these arguments, as typed where the CLI runs (`npm start -- --kubeconfig …` in this repository). */
export function startCommand(args: string, how: Invocation = invocation()): string {
  const rest = args === '' ? '' : ` ${args}`;
  switch (how) {
    case 'npm start':
    case 'npm run cli':
      return args === '' ? 'npm start' : `npm start --${rest}`;
    case 'npx':
      return `npx rx-informer start${rest}`;
    case 'bin':
      return `rx-informer start${rest}`;
  }
}

/** `rx-informer watch` with these arguments, as typed where the CLI runs (`npm run cli -- watch …` in this repository). */
export function watchCommand(args: string, how: Invocation = invocation()): string {
  const rest = args === '' ? '' : ` ${args}`;
  switch (how) {
    case 'npm start':
    case 'npm run cli':
      return `npm run cli -- watch${rest}`;
    case 'npx':
      return `npx rx-informer watch${rest}`;
    case 'bin':
      return `rx-informer watch${rest}`;
  }
}

/** The pointer every usage error ends with: `rx-informer --help`, as typed where the CLI runs. */
export function usageHint(how: Invocation = invocation()): string {
  const help = {
    bin: 'rx-informer --help',
    npx: 'npx rx-informer --help',
    'npm start': 'npm start -- --help',
    'npm run cli': 'npm run cli -- --help',
  }[how];
  return `run \`${help}\` for usage`;
}
