/**
 * The peer rule: a package whose objects or types cross our API (rxjs: Observables and the scheduler a
 * `TestScheduler.run()` virtualises; @kubernetes/client-node: the user's `KubeConfig`; zod: the user's schemas)
 * is a peer dependency of each package that imports it, never a dependency: a user's project holds one copy of
 * it, shared with ours. As a dependency, a project on another version of it got a nested copy: its Observables and
 * KubeConfig no longer type-checked against ours, and our timers ran on a scheduler its `TestScheduler` does not
 * virtualise (the README's own marble test failed). Each peer is also a devDependency (our tests need it
 * installed), at a version the peer range allows; the lock file says the same.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGES } from '../../scripts/packageEntries.ts';
import { ROOT } from '../../scripts/readmeExamples.ts';

interface Manifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>;
  readonly devDependencies?: Record<string, string>;
}

/** The npm packages a package's `src/` imports, by name (not Node's, not the workspace's own packages). */
function importedPackages(dir: string): Set<string> {
  const found = new Set<string>();
  const visit = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts')) {
        const code = readFileSync(path, 'utf8');
        for (const match of code.matchAll(/(?:\bfrom|\bimport\()\s*'((?:@[\w.-]+\/)?[\w-][\w.-]*)(?:\/[^']*)?'/g)) {
          const specifier = match[1]!;
          if (specifier in PACKAGES) continue; // node:… never matches: no "/" or "'" after "node"
          found.add(specifier);
        }
      }
    }
  };
  visit(join(ROOT, dir, 'src'));
  return found;
}

/** `^7.8.2` → [7, 8, 2]; only caret ranges are used in these manifests. */
function caret(range: string): [number, number, number] {
  const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range);
  if (!match) throw new Error(`not a caret range: ${range}`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Whether every version `dev` allows is one `peer` allows (both caret ranges). */
function within(dev: string, peer: string): boolean {
  const [d, p] = [caret(dev), caret(peer)];
  if (d[0] !== p[0]) return false;
  for (let i = 1; i < 3; i++) if (d[i] !== p[i]) return d[i]! > p[i]!;
  return true;
}

describe('the peer rule', () => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Manifest> };

  for (const [name, { dir }] of Object.entries(PACKAGES)) {
    it(`${name}: every package its src/ imports is a peer dependency (and a devDependency it allows), never a dependency`, () => {
      const manifest = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest;
      const imported = [...importedPackages(dir)].sort();
      expect(imported.length).toBeGreaterThan(0);
      expect(Object.keys(manifest.dependencies ?? {}).filter((dep) => imported.includes(dep))).toEqual([]);
      for (const dep of imported) {
        const peer = manifest.peerDependencies?.[dep];
        expect(peer, `${name}: ${dep} is not a peer dependency`).toBeDefined();
        expect(manifest.peerDependenciesMeta?.[dep]?.optional ?? false, `${name}: ${dep} is an optional peer`).toBe(false);
        const dev = manifest.devDependencies?.[dep];
        expect(dev, `${name}: ${dep} is not a devDependency`).toBeDefined();
        expect(within(dev!, peer!), `${name}: devDependency ${dep}@${dev} is outside the peer range ${peer}`).toBe(true);
      }
      // npm ci installs what the lock file says: it must agree with the manifest.
      const locked = lock.packages[dir === '.' ? '' : dir]!;
      expect(locked.dependencies ?? {}).toEqual(manifest.dependencies ?? {});
      expect(locked.peerDependencies ?? {}).toEqual(manifest.peerDependencies ?? {});
      expect(locked.devDependencies ?? {}).toEqual(manifest.devDependencies ?? {});
    });
  }

  it('the range check itself', () => {
    expect(within('^7.8.2', '^7.8.0')).toBe(true);
    expect(within('^7.8.0', '^7.8.0')).toBe(true);
    expect(within('^7.5.0', '^7.8.0')).toBe(false);
    expect(within('^8.0.0', '^7.8.0')).toBe(false);
  });
});
