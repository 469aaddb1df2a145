import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/*
 * Every exported name has one home: no name comes from two entry points, and the main entry and the
 * conformance kit stay within their caps (issue 28). Read from the sources (lib/), so it needs no build.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The most names an entry point may export (`.`: what an app uses; the kit: a store author's API only). */
const CAPS: Record<string, number> = { '.': 35, './provider-tests': 8 };

type Exports = Record<string, { import: { types: string } }>;

/** Each entry point of package.json with the lib/ source its declarations are built from. */
function entrySources(): [string, string][] {
  const { exports } = JSON.parse(readFileSync(`${REPO}package.json`, 'utf8')) as { exports: Exports };
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'object' && target.import?.types)
    .map(([entry, target]) => [entry, target.import.types.replace('./dist/esm/', 'lib/').replace(/\.d\.ts$/, '.ts')]);
}

/**
 * The names each entry point exports, from the type checker (`export *` and re-exports resolved). The program is
 * lib/'s files alone: what they import from node_modules is never read, a fifth of the files and of the CPU.
 */
function exportedNames(): Map<string, string[]> {
  const entries = entrySources();
  const libFiles = readdirSync(`${REPO}lib`, { recursive: true })
    .map(String)
    .filter((path) => path.endsWith('.ts'))
    .map((path) => `${REPO}lib/${path}`);
  const program = ts.createProgram(libFiles, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    noResolve: true,
    noLib: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  return new Map(
    entries.map(([entry, source]) => {
      const file = program.getSourceFile(`${REPO}${source}`);
      const symbol = file && checker.getSymbolAtLocation(file);
      if (!symbol) throw new Error(`${entry}: no module at ${source}`);
      return [entry, checker.getExportsOfModule(symbol).map((exported) => exported.name)];
    }),
  );
}

/** The names exported by more than one entry point, each with its entry points. */
function sharedNames(names: ReadonlyMap<string, readonly string[]>): Record<string, string[]> {
  const homes = new Map<string, string[]>();
  for (const [entry, exported] of names) {
    for (const name of exported) homes.set(name, [...(homes.get(name) ?? []), entry]);
  }
  return Object.fromEntries([...homes].filter(([, entries]) => entries.length > 1));
}

/** The entry points over their cap, with their count. */
function overCap(names: ReadonlyMap<string, readonly string[]>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(CAPS)
      .map(([entry, cap]): [string, number, number] => [entry, names.get(entry)?.length ?? 0, cap])
      .filter(([, count, cap]) => count > cap)
      .map(([entry, count]) => [entry, count]),
  );
}

describe('entry points', () => {
  const names = exportedNames();

  it('reads every entry point of package.json', () => {
    expect([...names.keys()]).toEqual(expect.arrayContaining(['.', './provider', './provider-tests', './redis']));
    expect(names.get('.')).toContain('SchedulerLockModule');
  });

  it('export each name from one entry point only', () => {
    expect(sharedNames(names)).toEqual({});
  });

  it('stay within their caps', () => {
    expect(overCap(names)).toEqual({});
  });

  it('would be refused with a name in two entries, or one name over a cap', () => {
    const withCopy = new Map(names).set('./locks-store', [
      ...(names.get('./locks-store') ?? []),
      'InMemoryLockProvider',
    ]);
    expect(sharedNames(withCopy)).toEqual({ InMemoryLockProvider: ['.', './locks-store'] });
    const kit = names.get('./provider-tests') ?? [];
    const overKit = new Map(names).set('./provider-tests', [...kit, ...Array.from({ length: 9 - kit.length }, String)]);
    expect(overCap(overKit)).toEqual({ './provider-tests': 9 });
  });
});
