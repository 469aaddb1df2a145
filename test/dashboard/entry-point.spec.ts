import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Run in a fresh Node inside the repository (the package imports itself by name, through `exports`, from dist/):
 * records every file `readFileSync` reads while the main entry loads, then while `./dashboard` loads. The status
 * page's module reads its `dashboard.html` when it loads, so a read of it means the page was loaded.
 */
const LOAD_BOTH_ENTRIES = `
  import fs from 'node:fs';
  import { syncBuiltinESMExports } from 'node:module';
  const read = fs.readFileSync;
  const files = [];
  fs.readFileSync = function (path, ...options) {
    files.push(String(path));
    return read.call(this, path, ...options);
  };
  syncBuiltinESMExports();
  const main = await import('nest-scheduler-lock');
  const readByMain = [...files];
  const dashboard = await import('nest-scheduler-lock/dashboard');
  console.log(JSON.stringify({
    mainExports: typeof main.SchedulerLockModule,
    readByMain,
    readByDashboard: files.slice(readByMain.length),
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
    expect((loaded.readByMain as string[]).filter((file) => file.includes('dashboard'))).toEqual([]);
    expect(loaded.readByDashboard).toEqual([new URL('dist/dashboard/dashboard.html', `file://${REPO}`).href]);
    expect(loaded.dashboardExports).toEqual([
      'ANONYMOUS_ACTOR',
      'DEFAULT_DASHBOARD_PATH',
      'STEERING_HEADER',
      'SchedulerLockDashboardModule',
    ]);
  });
});
