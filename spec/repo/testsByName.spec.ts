/**
 * A newcomer finds the tests of any file of src/ by its name (docs/architecture.md, "Tests"): for every file
 * with logic, a file of spec/ or marbles/ is named after it (`<file>.spec.ts`, `<file>.property.spec.ts`, …) or
 * imports it (by its path, or a binding named as the file: `import { deltaFifo } from '…/pipeline.ts'`); failing
 * that, a file of src/ with logic that imports it can be found so (the file is tested through it: `grep -rl
 * "<file>.ts" src`). Entries that only re-export (src/index.ts, src/pipeline.ts, …) lead nowhere. The few files
 * reached no such way are listed below with the spec that covers them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Files covered by a spec that reaches them under other names (each spec must name one of the file's exports). */
const COVERED_INDIRECTLY: Readonly<Record<string, string>> = {
  // Exported from the root entry only; its specs import `stripManagedFields` from there.
  'src/5-informer/transforms.ts': 'spec/2-source/decode.spec.ts',
  // Exported through predicates/index.ts; `generationChanged`, `labelsChanged`, … are tested by name.
  'src/controller/predicates/changes.ts': 'spec/controller/predicates.spec.ts',
};

type Files = ReadonlyMap<string, string>;

function read(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) found.set(relative(root, path), readFileSync(path, 'utf8'));
    }
  };
  walk(join(root, dir));
  return found;
}

interface Parsed {
  /** Relative imports and re-exports, resolved to repository paths. */
  readonly imports: readonly string[];
  /** Names imported (their exported names, before any `as`). */
  readonly names: readonly string[];
  /** Exported declarations' names. */
  readonly exports: readonly string[];
  /** Any function, method or class with a body. */
  readonly logic: boolean;
}

function parse(path: string, text: string): Parsed {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const imports: string[] = [];
  const names: string[] = [];
  const exports: string[] = [];
  let logic = false;
  const relativeTo = (specifier: string) => relative(root, resolve(root, dirname(path), specifier));
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      if (node.moduleSpecifier.text.startsWith('.')) imports.push(relativeTo(node.moduleSpecifier.text));
      const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : undefined;
      if (bindings && ts.isNamedImports(bindings))
        for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [specifier] = node.arguments;
      if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) imports.push(relativeTo(specifier.text));
    }
    if ((ts.isFunctionLike(node) && 'body' in node && node.body) || ts.isClassLike(node)) logic = true;
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const statement of source.statements) {
    if (!ts.canHaveModifiers(statement) || !ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations)
        if (ts.isIdentifier(declaration.name)) exports.push(declaration.name.text);
    } else if ('name' in statement && statement.name && ts.isIdentifier(statement.name as ts.Node)) {
      exports.push((statement.name as ts.Identifier).text);
    }
  }
  return { imports, names, exports, logic };
}

/** The files of `sources` with logic that no test in `tests` leads to by name. */
function unfindable(sources: Files, tests: Files): string[] {
  const parsed = new Map([...sources].map(([path, text]) => [path, parse(path, text)]));
  const testParsed = [...tests].map(([path, text]) => ({ path, ...parse(path, text) }));
  const stem = (path: string) => basename(path).split('.')[0]!.toLowerCase();
  const testStems = new Set(testParsed.map((t) => stem(t.path)));
  const importedPaths = new Set(testParsed.flatMap((t) => t.imports));
  const importedNames = new Set(testParsed.flatMap((t) => t.names.map((name) => name.toLowerCase())));
  const named = (path: string) => testStems.has(stem(path)) || importedPaths.has(path) || importedNames.has(stem(path));
  const importersOf = new Map<string, string[]>();
  for (const [from, p] of parsed) if (p.logic) for (const to of p.imports) importersOf.set(to, [...(importersOf.get(to) ?? []), from]);
  const found = new Map<string, boolean>();
  const findable = (path: string): boolean => {
    const known = found.get(path);
    if (known !== undefined) return known;
    found.set(path, false); // (no circles in src/, but never loop)
    const result = named(path) || (importersOf.get(path) ?? []).some(findable);
    found.set(path, result);
    return result;
  };
  return [...parsed].filter(([path, p]) => p.logic && !findable(path)).map(([path]) => path);
}

describe('the tests of a file of src/ are found by its name', () => {
  const sources = read('src');
  const tests = new Map([...read('spec'), ...read('marbles')]);

  it('reads the sources and the tests', () => {
    expect(sources.size).toBeGreaterThan(100);
    expect(tests.size).toBeGreaterThan(150);
  });

  it('every file with logic: by a test named after it or importing it, or through a file that imports it', () => {
    expect(unfindable(sources, tests).sort()).toEqual(Object.keys(COVERED_INDIRECTLY).sort());
  });

  it('each file covered indirectly: its covering spec exists and names one of its exports', () => {
    for (const [file, spec] of Object.entries(COVERED_INDIRECTLY)) {
      const text = tests.get(spec);
      expect(text, `${spec} (for ${file})`).toBeDefined();
      const { exports } = parse(file, sources.get(file) ?? '');
      expect(exports.length, file).toBeGreaterThan(0);
      expect(
        exports.some((name) => new RegExp(`\\b${name}\\b`).test(text!)),
        `${spec} names none of ${exports.join(', ')}`,
      ).toBe(true);
    }
  });

  it('finds a planted file no test reaches, and follows names, paths and importers', () => {
    const sourcesPlanted = new Map([
      ['src/a/lonely.ts', 'export function lonely() { return 1; }'],
      ['src/a/helper.ts', 'export function helper() { return 2; }'],
      ['src/a/user.ts', "import { helper } from './helper.ts';\nexport function user() { return helper(); }"],
      ['src/a/byName.ts', 'export function byName() { return 3; }'],
      ['src/a/types.ts', 'export interface OnlyTypes { readonly a: number }'],
      ['src/index.ts', "export { lonely } from './a/lonely.ts';\nexport { byName } from './a/byName.ts';"],
    ]);
    const testsPlanted = new Map([
      ['spec/a/user.spec.ts', "import { it } from 'vitest';\nit('x', () => {});"],
      ['spec/a/other.spec.ts', "import { byName } from '../../src/index.ts';\nbyName();"],
    ]);
    expect(unfindable(sourcesPlanted, testsPlanted)).toEqual(['src/a/lonely.ts']);
  });
});
