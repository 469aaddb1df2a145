import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** How apps resolve the package (see the README's TypeScript table), and the \`package.json\` type they need. */
const SETTINGS: [string, ts.CompilerOptions, 'module' | 'commonjs'][] = [
  ['nodenext, ESM', { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }, 'module'],
  [
    'nodenext, CommonJS',
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
    'commonjs',
  ],
  ['bundler', { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }, 'module'],
  [
    'commonjs (node10 resolution)',
    { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 },
    'commonjs',
  ],
];

/**
 * Type-checks `app` (an app's file using an entry point of this package) against the built declarations, the
 * package installed as npm would (its peers beside it), under each module resolution apps use; `declaration` (a
 * path under the repository) is a file of the entry point the check must have read. `alsoInstalled`: packages the
 * app imports besides the peers (this repository's copies).
 */
export function describeEntryTypes(
  entry: string,
  app: string,
  declaration: string,
  alsoInstalled: string[] = [],
): void {
  describe(`${entry} types, as an installed package`, () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'nsl-entry-types-'));
      await mkdir(join(dir, 'node_modules', '@nestjs'), { recursive: true });
      // Installed as npm would: the package and its peers (this repository's copies) side by side.
      const { peerDependencies } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
        peerDependencies: Record<string, string>;
      };
      for (const peer of [...Object.keys(peerDependencies), ...alsoInstalled]) {
        await mkdir(dirname(join(dir, 'node_modules', peer)), { recursive: true }); // a scope (@nestjs) first
        await symlink(join(REPO, 'node_modules', peer), join(dir, 'node_modules', peer), 'dir');
      }
      await symlink(REPO, join(dir, 'node_modules', 'nest-scheduler-lock'), 'dir');
      await writeFile(join(dir, 'app.ts'), app);
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it.each(SETTINGS)('resolve and check with module resolution %s', async (_, options, type) => {
      await writeFile(join(dir, 'package.json'), JSON.stringify({ type }));
      const program = ts.createProgram([join(dir, 'app.ts')], {
        ...options,
        target: ts.ScriptTarget.ES2022,
        strict: true,
        experimentalDecorators: true,
        noEmit: true,
        types: ['node'],
        typeRoots: [join(REPO, 'node_modules', '@types')],
      });
      // The app and this package's declarations (a type they name but do not ship fails here); not other packages'.
      // TypeScript follows the symlink: the package's files are named by their real path, in this repository's dist/.
      const ours = program
        .getSourceFiles()
        .filter((file) => file.fileName === join(dir, 'app.ts') || file.fileName.startsWith(join(REPO, 'dist/')));
      const errors = [
        ...program.getOptionsDiagnostics(),
        ...ours.flatMap((file) => program.getSemanticDiagnostics(file)),
      ].map(
        (diagnostic) =>
          `${diagnostic.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
      );
      expect(ours.map((file) => file.fileName)).toContain(join(REPO, declaration));
      expect(errors).toEqual([]);
    });
  });
}
