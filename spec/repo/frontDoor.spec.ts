/**
 * The root entry is the front door: what an informer's user needs on day one, ≤ 45 names. Every name is listed
 * here, so a new export at the root is a decision (made in this file), not a side effect; the rest lives in the
 * subpath entries named for their concern (docs/api.md says which).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/readmeExamples.ts';

const ROOT_NAMES = [
  // informers and their factory
  ...['informer', 'Informer', 'InformerOptions', 'informerFactory', 'InformerFactory', 'FactoryOptions'],
  ...['waitForCacheSync', 'cacheSynced$'],
  // deprecated aliases (DEPRECATED below): their home is another entry
  ...['shardedInformer', 'ShardedInformer'],
  // events and the cache
  ...['InformerEvent', 'InformerEventType', 'AddedEvent', 'UpdatedEvent', 'DeletedEvent'],
  ...['Store', 'Indexers', 'IndexFunc', 'UnknownIndexError'],
  // errors
  ...['InformerError', 'ErrorReason'],
  // the model and the resources
  ...['KubeObject', 'ObjectMeta', 'kubeObject', 'keyOf'],
  ...['Pod', 'ConfigMap', 'Secret', 'Service', 'Namespace', 'Node', 'Deployment', 'ReplicaSet', 'Event', 'Lease'],
  ...['customResource', 'Resource', 'ObjectOf', 'metadataOnly', 'PartialObjectMetadata'],
  // operators for consumers
  ...['ofType', 'skipResync', 'handleEvents', 'EventHandler', 'stripManagedFields'],
];

/**
 * Root names kept only so that 0.1.0's imports still compile, with the entry that is their home: each is marked
 * `@deprecated` in src/index.ts, naming that entry (docs/api.md, "Where each name lives", says why it moved).
 */
const DEPRECATED: Readonly<Record<string, string>> = {
  shardedInformer: 'rx-informer/leaderelection',
  ShardedInformer: 'rx-informer/leaderelection',
};

/** The names a module exports, read from its syntax (`export { … } from`, declarations); `export *` is refused. */
export function exportedNames(source: string): string[] {
  const file = ts.createSourceFile('entry.ts', source, ts.ScriptTarget.ESNext, true);
  const names: string[] = [];
  for (const statement of file.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (statement.exportClause === undefined || !ts.isNamedExports(statement.exportClause))
        throw new Error(`export * hides what it exports: ${statement.getText()}`);
      names.push(...statement.exportClause.elements.map((e) => e.name.text));
    } else if (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      if (ts.isVariableStatement(statement)) names.push(...statement.declarationList.declarations.map((d) => d.name.getText()));
      else names.push((statement as ts.DeclarationStatement).name?.getText() ?? 'default');
    }
  }
  return names;
}

describe('the front door (src/index.ts)', () => {
  const names = exportedNames(readFileSync(join(ROOT, 'src/index.ts'), 'utf8'));

  it('exports exactly the listed names, each once', () => {
    expect([...names].sort()).toEqual([...ROOT_NAMES].sort());
  });

  it('marks each deprecated alias @deprecated, naming its home, which exports it', () => {
    const file = ts.createSourceFile('index.ts', readFileSync(join(ROOT, 'src/index.ts'), 'utf8'), ts.ScriptTarget.ESNext, true);
    const home = (entry: string) => readFileSync(join(ROOT, `src/${entry.replace('rx-informer/', '')}/index.ts`), 'utf8');
    for (const [name, entry] of Object.entries(DEPRECATED)) {
      const declaration = file.statements.find((s) =>
        ts.isVariableStatement(s)
          ? s.declarationList.declarations.some((d) => d.name.getText() === name)
          : (s as ts.DeclarationStatement).name?.getText() === name,
      );
      const tags =
        declaration === undefined
          ? []
          : ts.getJSDocTags(ts.isVariableStatement(declaration) ? declaration.declarationList.declarations[0]! : declaration);
      const deprecated = tags.find((t) => t.tagName.text === 'deprecated');
      expect(deprecated, name).toBeDefined();
      expect(ts.getTextOfJSDocComment(deprecated?.comment), name).toContain(entry);
      expect(exportedNames(home(entry)), `${entry} exports ${name}`).toContain(name);
    }
  });

  it('exports at most 45 names', () => {
    expect(new Set(ROOT_NAMES).size).toBe(ROOT_NAMES.length);
    expect(ROOT_NAMES.length).toBeLessThanOrEqual(45);
  });

  it('the count sees every form of export (and refuses export *)', () => {
    expect(
      exportedNames("export { a, type B } from './x.ts';\nexport const c = 1, d = 2;\nexport function e() {}\nexport type F = 1;"),
    ).toEqual(['a', 'B', 'c', 'd', 'e', 'F']);
    expect(() => exportedNames("export * from './x.ts';")).toThrow(/export \*/);
  });
});
