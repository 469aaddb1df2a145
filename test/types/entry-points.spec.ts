import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';

/*
 * The package's entry points as an installed package sees them (the built declarations in dist/, from `npm run
 * build`): the main entry stays small, the plug-in contract is `nest-scheduler-lock/provider` (its conformance kit
 * `nest-scheduler-lock/provider-tests`), every entry resolves under each module resolution an app may use, and
 * members tagged @internal are not in the types (the app's `@ts-expect-error`; `npm run test:package` also
 * checks the packed declarations).
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** At most this many names in the main entry (issue 20: the anchors export 6 to 15; ours was 78). */
const MAIN_ENTRY_LIMIT = 35;

/** An app and a store's author, using the main entry and the provider entry; the app's test, the testing kit. */
const APP = `
import { Test } from '@nestjs/testing';
import { InMemoryLockProvider, SchedulerLockModule } from 'nest-scheduler-lock';
import { type LockProvider } from 'nest-scheduler-lock/provider';
import {
  ClusterAdmin,
  type LeaseRenewingLockProvider,
  type OperatorLockProvider,
  type OperatorProvider,
} from 'nest-scheduler-lock/provider';
import { SchedulerLockDashboardModule } from 'nest-scheduler-lock/dashboard';
import { PostgresLockProvider } from 'nest-scheduler-lock/postgres';
import { RedisLockProvider, type RedisClient } from 'nest-scheduler-lock/redis';
import { lockProviderChecks, type LockProviderSubject } from 'nest-scheduler-lock/provider-tests';
import { SchedulerLockTest, TestLockProvider, type TestRun, type TickOutcome } from 'nest-scheduler-lock/testing';
import { SchedulerLockStore, type LockAcquireResult, type LockStore } from 'nest-scheduler-lock/locks-store';

const provider: OperatorLockProvider & LeaseRenewingLockProvider = new InMemoryLockProvider({ node: 'node-a' });
const store: OperatorProvider = provider.operatorProvider();
// @ts-expect-error: @internal members are stripped from the declarations.
store.record('job', { type: 'pause', actor: 'a', at: 0 });
export const admin = new ClusterAdmin(store, 5_000);
export const plain: LockProvider = provider;
export const stores = (redis: RedisClient, pool: ConstructorParameters<typeof PostgresLockProvider>[0]): LockProvider[] => [
  new RedisLockProvider(redis, { keyPrefix: 'app' }),
  new PostgresLockProvider(pool),
];
export const modules = [
  SchedulerLockModule.forRoot({ provider, defaultLockAtMostFor: '1m' }),
  SchedulerLockDashboardModule.forRoot({ path: '/ops/locks', authorize: () => ({ actor: 'ops' }) }),
];
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'InMemoryLockProvider',
  provider: InMemoryLockProvider,
  create: () => new InMemoryLockProvider(),
};
export const locksStore: LockStore = new SchedulerLockStore(new InMemoryLockProvider());
export const acquired: Promise<LockAcquireResult> = locksStore.acquire('report', 'instance-1', 30_000);
export const checks: string[] = lockProviderChecks(subject).map((check) => \`\${check.section}: \${check.name}\`);
export async function tickOnce(store: TestLockProvider): Promise<[TickOutcome, TestRun]> {
  const builder = Test.createTestingModule({ imports: modules });
  const node = await SchedulerLockTest.node(await SchedulerLockTest.override(builder, { store, node: 'a' }).compile());
  const held = await store.hold('report', { as: 'node-b', for: '10m' });
  await held.release();
  return [await node.tick('report', { at: new Date() }), await store.expectRanOnce('report', new Date())];
}
`;

/** How apps resolve the package (docs/compatibility.md, TypeScript settings) and the `package.json` type they need. */
const SETTINGS: [string, ts.CompilerOptions, 'module' | 'commonjs'][] = [
  // node16 models a Node that cannot require() an ES module, so the CommonJS declarations' imports of Nest 12 (ESM
  // only) fail a library check there: the app is checked, the package's declarations are not (`skipLibCheck`, as
  // a `nest new` app sets it). nodenext checks both.
  [
    'node16, ESM (skipLibCheck)',
    { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, skipLibCheck: true },
    'module',
  ],
  ['nodenext, ESM', { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }, 'module'],
  [
    'nodenext, CommonJS',
    { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
    'commonjs',
  ],
  ['bundler', { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }, 'module'],
  ['node10', { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 }, 'commonjs'],
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nsl-entry-types-'));
  await mkdir(join(dir, 'node_modules', '@nestjs'), { recursive: true });
  // Installed as npm would: the package and its peers (this repository's copies) side by side.
  const { peerDependencies } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  // The testing kit's app imports @nestjs/testing (a devDependency of apps, not a peer).
  for (const peer of [...Object.keys(peerDependencies), '@nestjs/testing']) {
    await mkdir(dirname(join(dir, 'node_modules', peer)), { recursive: true }); // a scope (@nestjs) first
    await symlink(join(REPO, 'node_modules', peer), join(dir, 'node_modules', peer), 'dir');
  }
  await symlink(REPO, join(dir, 'node_modules', 'nest-scheduler-lock'), 'dir');
  await writeFile(join(dir, 'app.ts'), APP);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Each setting's program, made once: the main entry's test reads the one its resolution check made. */
const programs = new Map<string, ts.Program>();

/** The app's program under `setting`, in a package of `type`, compiled on first use. */
async function programOf([name, options, type]: (typeof SETTINGS)[number]): Promise<ts.Program> {
  let program = programs.get(name);
  if (!program) {
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type }));
    program = compile(options);
    programs.set(name, program);
  }
  return program;
}

function compile(options: ts.CompilerOptions): ts.Program {
  return ts.createProgram([join(dir, 'app.ts')], {
    ...options,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    experimentalDecorators: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [join(REPO, 'node_modules', '@types')],
  });
}

/** The names an entry's declarations export. */
function exportedNames(program: ts.Program, declarations: string): string[] {
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(join(REPO, declarations));
  if (!file) throw new Error(`${declarations} is not part of the program`);
  return checker.getExportsOfModule(checker.getSymbolAtLocation(file)!).map((symbol) => symbol.name);
}

describe('the package entry points, as an installed package', () => {
  it.each(SETTINGS)('resolve and check with module resolution %s', async (...setting) => {
    const program = await programOf(setting);
    // The app and this package's declarations; TypeScript names the package's files by their real path (dist/).
    const ours = program
      .getSourceFiles()
      .filter((file) => file.fileName === join(dir, 'app.ts') || file.fileName.startsWith(join(REPO, 'dist/')));
    const errors = [
      ...program.getOptionsDiagnostics(),
      ...ours.flatMap((file) => program.getSemanticDiagnostics(file)),
    ];
    const messages = errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, ' '));

    expect(ours.map((file) => file.fileName)).toEqual(
      expect.arrayContaining(
        [
          'index.d.ts',
          'provider/index.d.ts',
          'dashboard/index.d.ts',
          'testing/index.d.ts',
          'provider-tests/index.d.ts',
          'providers/redis/index.d.ts',
          'providers/postgres/index.d.ts',
          'locks-store/index.d.ts',
        ].map((d) => join(REPO, 'dist/cjs', d)),
      ),
    );
    expect(messages).toEqual([]);
  });

  it(`the main entry exports what an app uses, at most ${MAIN_ENTRY_LIMIT} names; the plug-in contract is /provider; each store its own`, async () => {
    const program = await programOf(SETTINGS[1]);

    const main = exportedNames(program, 'dist/cjs/index.d.ts');
    const provider = exportedNames(program, 'dist/cjs/provider/index.d.ts');
    expect(main.length).toBeLessThanOrEqual(MAIN_ENTRY_LIMIT);
    expect(main).toEqual(
      expect.arrayContaining(['SchedulerLockModule', 'SchedulerLock', 'SchedulerLockAdmin', 'InMemoryLockProvider']),
    );
    // The stores are symmetric: Redis and PostgreSQL each behind an entry of its own, with its client's types.
    const redis = exportedNames(program, 'dist/cjs/providers/redis/index.d.ts');
    const postgres = exportedNames(program, 'dist/cjs/providers/postgres/index.d.ts');
    expect(redis).toEqual(expect.arrayContaining(['RedisLockProvider', 'RedisLockProviderOptions', 'RedisClient']));
    expect(postgres).toEqual(expect.arrayContaining(['PostgresLockProvider', 'PostgresLockProviderOptions']));
    const storeNames = /Redis|Postgres|KEY_PREFIX/;
    expect([...main, ...provider].filter((name) => storeNames.test(name))).toEqual([]);
    const providerTypes = ['LockProvider', 'SimpleLock', 'LockConfiguration'];
    expect(provider).toEqual(expect.arrayContaining(providerTypes));
    expect(main.filter((name) => providerTypes.includes(name))).toEqual([]);
    const pluginContract = [
      'OperatorProvider',
      'OperatorLockProvider',
      'JobLockClaim',
      'LeaseRenewalOutcome',
      'RecoveryClaim',
    ];
    expect(provider).toEqual(expect.arrayContaining(pluginContract));
    expect(main.filter((name) => pluginContract.includes(name))).toEqual([]);
    // Store classes stay behind their provider (`operatorProvider()`).
    const stores = [...main, ...provider].filter(
      (name) => /OperatorProvider$/.test(name) && name !== 'OperatorProvider',
    );
    expect(stores).toEqual([]);
  });

  it('nest-scheduler-lock/locks-store loads neither Nest nor @nestjs/schedule (required in a fresh process)', async () => {
    // The packages a CommonJS require() of the entry (and of the store providers it wraps) left loaded.
    const script = `
      const { SchedulerLockStore } = require('nest-scheduler-lock/locks-store');
      const { RedisLockProvider } = require('nest-scheduler-lock/redis');
      const { PostgresLockProvider } = require('nest-scheduler-lock/postgres');
      if (![SchedulerLockStore, RedisLockProvider, PostgresLockProvider].every(Boolean)) process.exit(2);
      const packages = Object.keys(require.cache).filter((path) => path.includes('/node_modules/'))
        .map((path) => path.split('/node_modules/').pop().split('/').slice(0, path.includes('/node_modules/@') ? 2 : 1).join('/'));
      console.log(JSON.stringify([...new Set(packages)]));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--eval', script], { cwd: dir });
    const loaded = JSON.parse(stdout) as string[];
    expect(loaded).toContain('ioredis');
    expect(
      loaded.filter((name) => name.startsWith('@nestjs/') || name === 'rxjs' || name === 'reflect-metadata'),
    ).toEqual([]);
  });
});
