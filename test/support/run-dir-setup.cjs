const { chmodSync, mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/**
 * Jest's globalSetup of each tier: a temp dir for this run, named in NSL_RUN_DIR (the workers inherit it), where
 * the servers and data made once per run are recorded (made-once-per-run.ts) for run-dir-teardown.cjs to stop.
 */
module.exports = () => {
  // Each tier (Jest project) runs this hook: the tiers of one run share the first one's dir.
  if (process.env.NSL_RUN_DIR) return;
  const dir = mkdtempSync(join(tmpdir(), 'nsl-run-'));
  chmodSync(dir, 0o755); // the OS user postgres writes the run's PostgreSQL template under it
  process.env.NSL_RUN_DIR = dir;
};
