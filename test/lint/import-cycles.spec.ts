import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/*
 * No import loop in lib/ (issue 20), type-only imports included: a loop of types is still two files that
 * cannot be read one without the other. The graph is TypeScript's own reading of each file's imports and
 * re-exports (what `npx madge --circular --extensions ts lib` reports, without a dependency).
 */
const LIB = fileURLToPath(new URL('../../lib/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The files of lib/ that `file` imports or re-exports from (relative specifiers, `.js` naming the `.ts`). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const specifiers = source.statements.flatMap((statement) =>
    (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
    statement.moduleSpecifier &&
    ts.isStringLiteral(statement.moduleSpecifier)
      ? [statement.moduleSpecifier.text]
      : [],
  );
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
}

/** Every import loop of `graph`, each as the files around it, found by depth-first search. */
function importLoops(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const loops: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) return void loops.push([...path.slice(at), file]);
    if (done.has(file)) return;
    path.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return loops;
}

describe('the import graph of lib/', () => {
  it('has no loop, type-only imports included', () => {
    const files = sourceFiles(LIB);
    const graph = new Map(files.map((file) => [file, importsOf(file)]));

    const loops = importLoops(graph).map((loop) => loop.map((file) => relative(LIB, file)).join(' → '));

    expect(files.length).toBeGreaterThan(100);
    expect(loops).toEqual([]);
  });

  it('finds a loop where there is one', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);

    expect(importLoops(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });
});
