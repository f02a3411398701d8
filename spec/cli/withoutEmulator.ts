/**
 * Loaded with `node --import` by spec/cli/demo.spec.ts: the CLI as a user runs it who installed rx-informer
 * without rx-informer-emulator. `rx-informer-emulator` is resolved from a folder with no node_modules above it,
 * so the error is Node's own (ERR_MODULE_NOT_FOUND, "Cannot find package …").
 */
import { registerHooks } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const nowhere = pathToFileURL(join(tmpdir(), 'rx-informer-without-emulator', 'main.js')).href;

registerHooks({
  resolve(specifier, context, nextResolve) {
    return nextResolve(specifier, specifier === 'rx-informer-emulator' ? { ...context, parentURL: nowhere } : context);
  },
});
