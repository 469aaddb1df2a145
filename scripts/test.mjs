/**
 * `npm test [-- <jest arguments>]`: runs the specs the arguments select (all of them by default), building only
 * what those specs need first:
 * - a system spec (test/tiers.mjs) may load dist/ or .build/: both are made first, unless no source is newer;
 * - an integration spec needs a Redis: the run's Redis (test/support/with-redis.ts, compiled once) is found or started;
 * - a unit spec needs nothing, so `npm test -- test/core` starts at once.
 * Jest's own exit code is this script's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tierOf } from '../test/tiers.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const JEST = [process.execPath, '--experimental-vm-modules', 'node_modules/jest/bin/jest.js'];
const WITH_REDIS = '.build/test/support/with-redis.js';
/**
 * Two workers, one per core: the runner (test/support/esm-test-runner.cjs) never runs two system specs at once,
 * so a system spec's processes and real-time waits share the machine with one unit or integration spec at most.
 */
const WORKERS = ['--maxWorkers', '2'];

/** What dist/ and .build/ are compiled from (tsconfig.json, tsconfig.build.json, scripts/embed-assets.mjs). */
const SOURCES = [
  'lib',
  'test',
  'sample-app',
  'bench',
  'scripts/embed-assets.mjs',
  'scripts/write-esm-entries.mjs',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
];
/** A file each build writes anew: the package's main entry, and the run's helper in .build/. */
const OUTPUTS = ['dist/cjs/index.js', WITH_REDIS];

/** The newest modification time of the files under `paths`, in ms. */
function newest(paths) {
  return Math.max(
    ...paths.map((path) => {
      const stat = statSync(join(root, path));
      if (!stat.isDirectory()) return stat.mtimeMs;
      const files = readdirSync(join(root, path), { recursive: true }).map((file) => join(path, String(file)));
      return Math.max(stat.mtimeMs, ...files.map((file) => statSync(join(root, file)).mtimeMs));
    }),
  );
}

/** Whether dist/ and .build/ are missing, or older than a source: as make decides. */
function buildIsStale() {
  if (!OUTPUTS.every((output) => existsSync(join(root, output)))) return true;
  return newest(SOURCES) > Math.min(...OUTPUTS.map((output) => statSync(join(root, output)).mtimeMs));
}

/** Runs `command`, inheriting the terminal; exits with its code when it fails. */
function run(command, args) {
  const { status, signal } = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? (signal ? 1 : 0));
}

/** The tiers of the spec files that Jest would run with `args`. */
function selectedTiers(args) {
  const listed = spawnSync(JEST[0], [...JEST.slice(1), '--listTests', '--json', ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (listed.status !== 0) process.exit(listed.status ?? 1);
  const files = JSON.parse(listed.stdout.slice(listed.stdout.indexOf('[')));
  return new Set(files.map((file) => tierOf(relative(`${root}test`, file).split('\\').join('/'))));
}

const args = process.argv.slice(2);
const tiers = selectedTiers(args);
if (tiers.has('system') && buildIsStale()) {
  run('npm', ['run', 'build']);
  run('npm', ['run', 'build:run']);
} else if (tiers.has('integration') && !existsSync(`${root}${WITH_REDIS}`)) {
  run('npm', ['run', 'build:run']);
}
const hasWorkers = args.some((arg) => /^(--maxWorkers|-w|--runInBand|-i)(=|$)/.test(arg));
const jest = [...JEST, ...(hasWorkers ? [] : WORKERS), ...args];
const needsRedis = tiers.has('integration') || tiers.has('system');
run(needsRedis ? JEST[0] : jest[0], needsRedis ? [WITH_REDIS, ...jest] : jest.slice(1));
