/**
 * Loaded with `node --import` by readmeExamples.ts: documentation examples
 * import the package by its name, and this makes that name mean the sources
 * (package.json's exports point at dist/, which may be stale or not built).
 */
import { registerHooks } from 'node:module';
import { PACKAGE_ENTRIES } from './packageEntries.ts';

const SOURCES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(PACKAGE_ENTRIES).map(([name, path]) => [name, new URL(`../${path}`, import.meta.url).href]),
);

registerHooks({
  resolve(specifier, context, nextResolve) {
    const url = SOURCES[specifier];
    return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
  },
});
