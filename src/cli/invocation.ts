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

/** What {@link outputWatch} needs of the bin's stdout. */
export interface WatchedOutput {
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  write(chunk: string, callback: (error?: Error | null) => void): boolean;
  readonly destroyed: boolean;
}

/**
 * Watches `stream` (the bin's stdout) from the start of a run for a failed write; the function it returns is the
 * run's exit code once what was written is out: `code`, or 1 when a write failed (`--help > /dev/full`: ENOSPC),
 * said on stderr (`say`) in one line. A reader gone (EPIPE) is no failure, as for `watch`; a run that already failed
 * keeps its code (and said why itself).
 */
export function outputWatch(stream: WatchedOutput, say: (line: string) => void): (code: number) => Promise<number> {
  let failure: NodeJS.ErrnoException | undefined;
  stream.on('error', (error) => (failure ??= error));
  return (code) =>
    new Promise<number>((resolve) => {
      const done = (error?: Error | null) => {
        const failed = failure ?? (error as NodeJS.ErrnoException | null | undefined);
        if (code !== 0 || !failed || failed.code === 'EPIPE') return resolve(code);
        say(`error: cannot write to stdout: ${failed.message.split('\n')[0] ?? ''}`);
        resolve(1);
      };
      if (code !== 0 || failure !== undefined || stream.destroyed) done();
      else stream.write('', done);
    });
}
