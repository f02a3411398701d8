/**
 * The import graph of src/ has no circles: every relative import (`import`, `import type`, `export … from`,
 * `import()`) of a .ts file is an edge, and each strongly connected component of more than one file (or a file
 * importing itself) is a circle. Run by `npm run lint`; `spec/repo/importCycles.spec.ts` proves it finds a planted one.
 *
 *   node scripts/importCycles.ts [dir]   prints each circle and exits 1, or exits 0
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The relative module specifiers a source imports or re-exports. */
export function importsOf(fileName: string, text: string): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) found.push(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.ESNext, true));
  return found.filter((specifier) => specifier.startsWith('.'));
}

/** The circles of a graph given as file → its source text (paths absolute): each as its files, sorted. */
export function findCycles(sources: ReadonlyMap<string, string>): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, text] of sources) {
    edges.set(
      file,
      importsOf(file, text)
        .map((specifier) => resolve(dirname(file), specifier))
        .filter((target) => sources.has(target)),
    );
  }
  // Tarjan's strongly connected components, iteratively (no recursion limit on deep graphs).
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: [string, number][] = [[root, 0]];
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [node, next] = frame;
      if (next === 0) {
        index.set(node, counter);
        low.set(node, counter++);
        stack.push(node);
        onStack.add(node);
      }
      const targets = edges.get(node)!;
      if (next < targets.length) {
        frame[1]++;
        const target = targets[next]!;
        if (!index.has(target)) work.push([target, 0]);
        else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent[0], Math.min(low.get(parent[0])!, low.get(node)!));
      if (low.get(node) === index.get(node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1 || targets.includes(node)) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

/** Every .ts file under a folder, with its text. */
export function sourcesUnder(dir: string): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) sources.set(path, readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return sources;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = resolve(process.argv[2] ?? 'src');
  const cycles = findCycles(sourcesUnder(dir));
  for (const cycle of cycles) console.error(`import circle: ${cycle.map((file) => relative(process.cwd(), file)).join(' ⇄ ')}`);
  if (cycles.length > 0) process.exit(1);
}
