import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { countDuplicates, summarizeInstances } from '../../sample-app/demo/tick-table.js';
import { spawnJsonLinesProcess, type JsonLinesProcess } from '../support/json-lines-process.js';
import { createSchema, dropSchema, postgresPool, SHARED_POSTGRES, uniqueSchema } from '../support/shared-postgres.js';
import { deleteKeys, SHARED_REDIS_URL, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import type { AppShape } from './app-shapes.js';
import { niced, seconds, step } from './commands.js';
import type { Report } from './fixtures/app/src/report.js';

const run = promisify(execFile);

/** Runs to see, once every instance is up, before the verdict: one per occurrence when locking works. */
const RUNS_TO_SEE = 5;
/** Generous: up to seven Nest apps start at once on two cores, beside the other shapes' installs. */
const READY_TIMEOUT_MS = 60_000;
const RUNS_TIMEOUT_MS = 30_000;
/** The lock name of the fixtures' job: `ClassName.methodName`. */
const JOB = 'TickerService.tick';

/** One stdout line of a fixture app. */
type AppMessage = Report & { instance: string };

/** Where a fresh app was installed, and the versions npm chose for it. */
interface InstalledApp {
  dir: string;
  versions: string;
}

/**
 * Installs the tarball into a fresh app of `shape` under `workDir` with plain `npm install`, compiles it
 * with its own `tsc`, starts it several times on the shared Redis (or PostgreSQL), and checks that each cron occurrence
 * ran on exactly one instance while all of them were up. Throws on any failure; returns a summary.
 */
export async function checkFreshApp(
  shape: AppShape,
  paths: { tarball: string; fixtures: string; workDir: string },
  log: (step: string) => void,
): Promise<string> {
  const app = await installApp(shape, paths, log);
  const startedAt = performance.now();
  const outcome = await runInstances(shape, app.dir);
  log(`ran ${outcome.instances} instances: ${seconds(startedAt)}`);
  return `${app.versions}; ${outcome.summary}`;
}

async function installApp(
  shape: AppShape,
  { tarball, fixtures, workDir }: { tarball: string; fixtures: string; workDir: string },
  log: (step: string) => void,
): Promise<InstalledApp> {
  const dir = join(workDir, shape.name);
  await mkdir(dir);
  await cp(join(fixtures, 'app', 'src'), join(dir, 'src'), { recursive: true });
  await cp(join(fixtures, shape.name), dir, { recursive: true });
  if (shape.plainJavaScriptInstance) {
    await cp(join(fixtures, 'plain-js'), join(dir, 'plain-js'), { recursive: true });
  }

  let startedAt = performance.now();
  // Peer conflicts must fail the install as they would for a user: no --legacy-peer-deps, no --force,
  // whatever a local .npmrc says.
  const install = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--legacy-peer-deps=false', tarball];
  await step(`npm install in ${dir}`, () => run('nice', niced('npm', install), { cwd: dir }));
  log(`npm install: ${seconds(startedAt)}`);

  startedAt = performance.now();
  const tsc = join(dir, 'node_modules', '.bin', 'tsc');
  await step(`tsc in ${dir}`, () => run('nice', niced(tsc, ['-p', 'tsconfig.json']), { cwd: dir }));
  const client = shape.store === 'redis' ? 'ioredis' : 'pg';
  const versions = await installedVersions(dir, ['@nestjs/core', '@nestjs/schedule', client, 'typescript']);
  // An optional peer the app did not ask for must not be installed for it (npm installs required peers).
  if (shape.store !== 'redis' && existsSync(join(dir, 'node_modules', 'ioredis'))) {
    throw new Error(`ioredis was installed in ${dir}, which depends on pg alone`);
  }
  log(`tsc: ${seconds(startedAt)} (${versions})`);
  return { dir, versions };
}

/** Starts the app's instances, collects their reports until enough occurrences ran, and judges them. */
async function runInstances(shape: AppShape, dir: string): Promise<{ instances: number; summary: string }> {
  const compiled = join(dir, 'dist', 'main.js');
  const launches = [
    ...Array.from({ length: shape.typeScriptInstances }, (_, i) => ({ instance: `ts-${i + 1}`, script: compiled })),
    ...(shape.plainJavaScriptInstance ? [{ instance: 'js', script: join(dir, 'plain-js', 'main.js') }] : []),
  ];
  const store = await appStore(shape);
  const messages: AppMessage[] = [];
  let death: string | undefined;
  const processes: JsonLinesProcess[] = launches.map(({ instance, script }) =>
    spawnJsonLinesProcess<AppMessage>({
      script,
      env: { INSTANCE: instance, NO_COLOR: '1', ...store.env },
      onMessage: (message) => messages.push(message),
      onUnexpectedExit: (description) => (death ??= `instance ${instance} died: ${description.split('\n')[0]}`),
    }),
  );
  const names = launches.map(({ instance }) => instance);
  const alive = () => {
    if (death) throw new Error(death);
    return true;
  };

  let allReadyAt = 0;
  try {
    await waitUntil(
      () => alive() && names.every((name) => messages.some((m) => m.kind === 'ready' && m.instance === name)),
      `${names.join(', ')} are ready`,
      { timeoutMs: READY_TIMEOUT_MS },
    );
    allReadyAt = messages.length;
    await waitUntil(
      () => {
        const since = messages.slice(allReadyAt);
        return (
          alive() &&
          runsOf(since).length >= RUNS_TO_SEE &&
          names.every((name) => since.some((m) => m.instance === name && m.kind !== 'ready'))
        );
      },
      `${RUNS_TO_SEE} runs, and a run or a skipped tick on each instance`,
      { timeoutMs: RUNS_TIMEOUT_MS },
    );
  } catch (error) {
    const logs = processes.map((child, i) => `--- ${names[i]} (pid ${child.pid}) ---\n${child.diagnostics()}`);
    const lastReports = `${messages.length} reports, the last ones: ${JSON.stringify(messages.slice(-10))}`;
    throw new Error([(error as Error).message, lastReports, ...logs].join('\n'));
  } finally {
    await Promise.all(processes.map((process) => process.kill()));
    await store.clean();
  }
  return { instances: launches.length, summary: judge(messages, allReadyAt, names) };
}

/** Where the instances of `shape` keep their locks (the environment that tells them), and how to remove it. */
async function appStore(shape: AppShape): Promise<{ env: Record<string, string>; clean: () => Promise<unknown> }> {
  if (shape.store === 'redis') {
    const keyPrefix = uniquePrefix(`package-${shape.name}`);
    const clean = () => {
      const redis = sharedRedis();
      return deleteKeys(redis, keyPrefix).finally(() => redis.quit());
    };
    return { env: { REDIS_URL: SHARED_REDIS_URL, LOCK_KEY_PREFIX: keyPrefix }, clean };
  }
  const schema = uniqueSchema(`package_${shape.name}`);
  const pool = postgresPool();
  await createSchema(pool, schema);
  const { host, port, database, user } = SHARED_POSTGRES;
  const env = { PGHOST: host, PGPORT: String(port), PGDATABASE: database, PGUSER: user, LOCK_SCHEMA: schema };
  return { env, clean: () => dropSchema(pool, schema).finally(() => pool.end()) };
}

/** The verdict on the reports: throws unless every occurrence ran once and every instance took part. */
function judge(messages: AppMessage[], allReadyAt: number, names: string[]): string {
  const runs = runsOf(messages);
  const ticks = runs.map(({ instance, occurrence }) => ({ instance, job: JOB, tick: occurrence }));
  if (runs.some((run) => Number.isNaN(Date.parse(run.occurrence)))) {
    throw new Error(`a run without a lock occurrence (currentLock().occurrence) ran unlocked: ${JSON.stringify(runs)}`);
  }
  const duplicates = countDuplicates(ticks);
  if (duplicates > 0) {
    throw new Error(`${duplicates} occurrence(s) ran on more than one instance: ${JSON.stringify(runs)}`);
  }
  const since = messages.slice(allReadyAt);
  const skips = since.filter((m) => m.kind === 'skipped').length;
  const occurrences = new Set(runsOf(since).map((m) => m.occurrence)).size;
  return (
    `${names.length} instances up (${names.join(', ')}), ${occurrences} occurrences while all were up, ` +
    `each run once (runs: ${summarizeInstances(ticks)}; ${skips} skipped ticks)`
  );
}

function runsOf(messages: AppMessage[]): Array<Extract<AppMessage, { kind: 'run' }>> {
  return messages.filter((m): m is Extract<AppMessage, { kind: 'run' }> => m.kind === 'run');
}

/** `name version` of each package as installed in the app at `dir`. */
async function installedVersions(dir: string, packages: string[]): Promise<string> {
  const versions = await Promise.all(
    packages.map(async (name) => {
      const manifest = await readFile(join(dir, 'node_modules', name, 'package.json'), 'utf8');
      return `${name} ${(JSON.parse(manifest) as { version: string }).version}`;
    }),
  );
  return versions.join(', ');
}
