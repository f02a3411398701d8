/**
 * Loaded with `node --import` by readme-examples.ts: documentation examples
 * import the package by its name, and this makes that name mean the sources
 * (package.json's exports point at dist/, which may be stale or not built).
 */
import { registerHooks } from 'node:module';

const SOURCES: Readonly<Record<string, string>> = {
  'rx-informer': new URL('../src/index.ts', import.meta.url).href,
  'rx-informer/testing': new URL('../src/testing/index.ts', import.meta.url).href,
  'rx-informer/leaderelection': new URL('../src/leaderelection/index.ts', import.meta.url).href,
};

registerHooks({
  resolve(specifier, context, nextResolve) {
    const url = SOURCES[specifier];
    return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
  },
});
