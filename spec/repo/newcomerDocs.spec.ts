/**
 * What a newcomer's first hour found missing or wrong in the docs is there (audit19, findings 4, 7, 8). The
 * behaviour behind each is tested beside its code (waitForCacheSync.spec, clientNodeClaims.spec); docs/migrating.md's
 * write-back example is compiled and run by readme.spec (it does not compile without its cast).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const doc = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const row = (text: string, starts: string) => text.split('\n').find((line) => line.startsWith(starts)) ?? '';

describe('the docs a newcomer reads first', () => {
  it("resyncPeriod's unit is stated, with why it lacks the Ms suffix", () => {
    expect(row(doc('docs/api.md'), '| `resyncPeriod` |')).toMatch(/in \*\*milliseconds\*\*, though it lacks the `Ms` suffix/);
  });

  it('serve() is said to be cold, in README.md and docs/operations.md', () => {
    expect(doc('README.md')).toMatch(/`serve\(factory, \{ port \}\)` from `rx-informer\/metrics` \(cold: listens once subscribed\)/);
    expect(doc('docs/operations.md')).toMatch(
      /It is a \*\*cold\*\* Observable: `serve\(factory, \{ port: 8080 \}\)` alone listens nowhere/,
    );
  });

  it("waitForCacheSync's timeoutMs is documented, with what its rejection names", () => {
    expect(doc('docs/api.md')).toMatch(
      /`waitForCacheSync\(informers, \{ timeoutMs \}\)`[^]*naming each informer that did not sync with the last error/,
    );
  });

  it('writing a cached object back with client-node is shown, cast and why', () => {
    const migrating = doc('docs/migrating.md');
    expect(migrating).toMatch(/## Writing a cached object back with client-node's typed API/);
    expect(migrating).toMatch(/as unknown as V1ConfigMap/);
    expect(migrating).toMatch(/timestamps are RFC 3339 strings and a map the server\nsends as `null` stays `null`/);
  });
});
