#!/usr/bin/env node
/**
 * The `rx-informer` bin. It checks the Node.js version before importing
 * anything: on an older Node the Kubernetes client (undici) dies at import
 * time with a stack trace, before any of our code could explain why.
 */
export {};

const MINIMUM = [22, 19] as const;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);

if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(
    `rx-informer needs Node.js ${MINIMUM.join('.')} or newer; this is Node.js ${process.versions.node}.\n` +
      'Install Node.js 24 LTS (https://nodejs.org, or `nvm install 24` / `fnm install 24`) and run it again.\n',
  );
  process.exitCode = 1;
} else {
  // Most of a start is compiling the Kubernetes client; Node caches that (in the OS temp dir) from the second run on.
  const { enableCompileCache } = await import('node:module');
  enableCompileCache();
  const [{ run }, { outputWatch }] = await Promise.all([import('./cli.ts'), import('./invocation.ts')]);
  // A write to stdout that failed (`--help > /dev/full`) is exit 1, not 0, once what was written is out.
  const settled = outputWatch(process.stdout, (line) => void process.stderr.write(`${line}\n`));
  // exit, not exitCode: informers, sockets and timers may still hold the loop open.
  process.exit(await settled(await run(process.argv.slice(2))));
}
