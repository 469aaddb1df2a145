import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** An app's use of the status page: its options are type-checked against the built declarations. */
const APP = `
import { Module } from '@nestjs/common';
import { SchedulerLockModule } from 'nest-scheduler-lock';
import { SchedulerLockDashboardModule, type DashboardAccess } from 'nest-scheduler-lock/dashboard';

interface SessionRequest {
  readonly session?: { readonly user?: string };
}

function authorize(request: SessionRequest): DashboardAccess | false {
  return request.session?.user ? { actor: request.session.user } : false;
}

@Module({
  imports: [
    SchedulerLockModule.forRoot({ redis: 'redis://127.0.0.1:6379', defaultLockAtMostFor: '10m' }),
    SchedulerLockDashboardModule.forRoot({ path: '/ops/locks', authorize, readOnly: true }),
  ],
})
export class AppModule {}
`;

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

describe('nest-scheduler-lock/dashboard types, as an installed package', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nsl-dashboard-types-'));
    await mkdir(join(dir, 'node_modules', '@nestjs'), { recursive: true });
    // Installed as npm would: the package and its peers (this repository's copies) side by side.
    const { peerDependencies } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
    };
    for (const peer of Object.keys(peerDependencies)) {
      await mkdir(dirname(join(dir, 'node_modules', peer)), { recursive: true }); // a scope (@nestjs) first
      await symlink(join(REPO, 'node_modules', peer), join(dir, 'node_modules', peer), 'dir');
    }
    await symlink(REPO, join(dir, 'node_modules', 'nest-scheduler-lock'), 'dir');
    await writeFile(join(dir, 'app.ts'), APP);
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
    expect(ours.map((file) => file.fileName)).toContain(join(REPO, 'dist/cjs/dashboard/dashboard-options.d.ts'));
    expect(errors).toEqual([]);
  });
});
