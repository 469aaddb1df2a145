const { readFileSync, readdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Jest's globalTeardown of each tier: SIGKILLs by PID every server made once for this run, as recorded in the
 * run's dir (made-once-per-run.ts), then removes their temp dirs and the run's dir.
 */
module.exports = () => {
  const runDir = process.env.NSL_RUN_DIR;
  if (!runDir) return;
  const records = readdirSync(runDir).filter((file) => file.endsWith('.json'));
  for (const record of records) {
    const { pids = [], dirs = [] } = JSON.parse(readFileSync(join(runDir, record), 'utf8'));
    for (const pid of pids) killIfAlive(pid);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  rmSync(runDir, { recursive: true, force: true });
  delete process.env.NSL_RUN_DIR;
};

function killIfAlive(pid) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if (error.code !== 'ESRCH') throw error;
  }
}
