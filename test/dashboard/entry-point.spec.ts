import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Run in a fresh Node inside the repository (the package imports itself by name, through `exports`, from dist/):
 * records the package's CommonJS modules (dist/cjs, which its ES-module entries re-export) that load with the
 * main entry, then with `./dashboard`.
 */
const LOAD_BOTH_ENTRIES = `
  import { createRequire } from 'node:module';
  const loaded = () => Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes('/dist/cjs/'));
  const main = await import('nest-scheduler-lock');
  const loadedByMain = loaded();
  const dashboard = await import('nest-scheduler-lock/dashboard');
  console.log(JSON.stringify({
    mainExports: typeof main.SchedulerLockModule,
    loadedByMain,
    loadedByDashboard: loaded().filter((file) => !loadedByMain.includes(file)),
    dashboardExports: Object.keys(dashboard).sort(),
  }));
`;

describe('the nest-scheduler-lock/dashboard entry point (built package)', () => {
  it('is a subpath of its own: the main entry does not load the status page', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', LOAD_BOTH_ENTRIES], {
      cwd: REPO,
    });
    const loaded = JSON.parse(stdout) as Record<string, unknown>;
    expect(loaded.mainExports).toBe('function');
    expect((loaded.loadedByMain as string[]).filter((file) => file.includes('dashboard'))).toEqual([]);
    expect(loaded.loadedByDashboard).toContain(join(REPO, 'dist/cjs/dashboard/dashboard-page.js'));
    expect(loaded.dashboardExports).toEqual([
      'ANONYMOUS_ACTOR',
      'DEFAULT_DASHBOARD_PATH',
      'OPERATOR_ACTION_HEADER',
      'SchedulerLockDashboardModule',
    ]);
  });
});
