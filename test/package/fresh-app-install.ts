import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { APP_SHAPES } from './app-shapes.js';
import { checkFreshApp } from './fresh-app.js';
import { installNode, MACHINE_NODE, majorOf, NODE_CACHE, type NodeRuntime } from './node-versions.js';
import { checkTestedApp, TESTED_APPS } from './scaffold-apps.js';
import { checkTarball } from './tarball-check.js';

/**
 * `npm run test:package [-- --node 22,24] [-- --only <check>,…]`: packs this package as `npm publish` would, checks the tarball's
 * contents, and installs it, all at once, into fresh apps of every shape of test/package/app-shapes.ts (compiled
 * and started) and into the scaffolded apps of test/package/scaffold-apps.ts (their own test scripts run).
 * The scaffolded apps' scripts run on this Node and on each Node major given with `--node`, and an app that needs
 * a newer Node than those gets it too; those come from the npm registry's `node` package (node-versions.ts),
 * kept in node_modules/.cache. Prints one PASS/FAIL line per check and ends with `N passed, N failed`; exits 1
 * on any failure, keeping the apps' directory for a look. Needs the registry (or npm's cache), Redis at
 * REDIS_URL and the shared PostgreSQL. `--only` runs the named checks alone (`--only postgres-only`).
 */

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = join(REPO, 'test', 'package', 'fixtures');

interface CheckResult {
  name: string;
  passed: boolean;
  detail: string;
}

async function main(): Promise<number> {
  const startedAt = performance.now();
  const workDir = await mkdtemp(join(tmpdir(), 'nsl-package-test-'));
  const only = chosenChecks(process.argv.slice(2));
  const shapes = APP_SHAPES.filter((shape) => only(shape.name));
  const testedApps = TESTED_APPS.filter((app) => only(app.name));
  const [tarball, runtimes] = await Promise.all([pack(workDir), nodeRuntimes(process.argv.slice(2), testedApps)]);
  const apps = shapes.length + testedApps.length;
  console.log(`Packed ${tarball}; installing it into ${apps} fresh apps under ${workDir}`);
  console.log(`Scaffolded apps' tests run on Node ${runtimes.map((runtime) => runtime.version).join(', ')}`);

  const checks: Array<{ name: string; run: () => Promise<string> }> = [
    ...(only('tarball') ? [{ name: 'tarball', run: () => checkTarball(tarball) }] : []),
    ...shapes.map((shape) => ({
      name: shape.name,
      run: async () => {
        const log = (step: string) => console.log(`[${shape.name}] ${step}`);
        const summary = await checkFreshApp(shape, { tarball, fixtures: FIXTURES, workDir }, log);
        return `${shape.description}: ${summary}`;
      },
    })),
    ...testedApps.map((app) => ({
      name: app.name,
      run: async () => {
        const log = (step: string) => console.log(`[${app.name}] ${step}`);
        const summary = await checkTestedApp(app, { tarball, fixtures: FIXTURES, workDir }, runtimes, log);
        return `${app.description}: ${summary}`;
      },
    })),
  ];
  const results = await Promise.all(checks.map(runCheck));

  console.log('');
  for (const { name, passed, detail } of results) console.log(`${passed ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
  const failed = results.filter((result) => !result.passed).length;
  if (failed === 0) await rm(workDir, { recursive: true, force: true });
  else console.log(`\nThe apps are kept in ${workDir}`);
  console.log(`\nWall time: ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
  console.log(`${results.length - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

async function runCheck({ name, run }: { name: string; run: () => Promise<string> }): Promise<CheckResult> {
  try {
    return { name, passed: true, detail: await run() };
  } catch (error) {
    return { name, passed: false, detail: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * This Node, each major of `--node <majors>` (comma-separated), and the lowest major an app needs when none of
 * those is as new (installed from the registry).
 */
async function nodeRuntimes(args: string[], testedApps: typeof TESTED_APPS): Promise<NodeRuntime[]> {
  const flag = args.indexOf('--node');
  const requested = flag === -1 ? [] : (args[flag + 1] ?? '').split(',').map(Number);
  if (requested.some((major) => !Number.isInteger(major) || major < 20)) {
    throw new Error(`--node takes Node majors, comma-separated (--node 22,24); got ${args[flag + 1]}`);
  }
  const majors = new Set(requested.filter((major) => major !== majorOf(MACHINE_NODE)));
  for (const { minimumNode } of testedApps) {
    const newest = Math.max(majorOf(MACHINE_NODE), ...majors);
    if (minimumNode !== undefined && newest < minimumNode) majors.add(minimumNode);
  }
  const installed = await Promise.all([...majors].map((major) => installNode(major, NODE_CACHE)));
  return [MACHINE_NODE, ...installed];
}

/** Whether to run the check of that name: all of them, or those of `--only <names>` (comma-separated). */
function chosenChecks(args: string[]): (name: string) => boolean {
  const flag = args.indexOf('--only');
  if (flag === -1) return () => true;
  const names = (args[flag + 1] ?? '').split(',');
  const known = ['tarball', ...APP_SHAPES.map((shape) => shape.name), ...TESTED_APPS.map((app) => app.name)];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) throw new Error(`--only takes checks of ${known.join(', ')}; got ${unknown.join(', ')}`);
  return (name) => names.includes(name);
}

/**
 * `npm pack` of the built package (`npm run build` comes first in `test:package`, so the pack's own
 * `prepack` build is skipped); returns the tarball's path.
 */
async function pack(destination: string): Promise<string> {
  await promisify(execFile)('npm', ['pack', '--ignore-scripts', '--pack-destination', destination], { cwd: REPO });
  const manifest = await readFile(join(REPO, 'package.json'), 'utf8');
  const { name, version } = JSON.parse(manifest) as { name: string; version: string };
  return join(destination, `${name}-${version}.tgz`);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    console.log('0 passed, 1 failed');
    process.exitCode = 1;
  },
);
