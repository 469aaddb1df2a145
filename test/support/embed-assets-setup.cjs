const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

/**
 * Jest's globalSetup: writes lib/'s generated modules (scripts/embed-assets.mjs, about 70 ms) before each run, so
 * a plain `npx jest` works in a fresh clone and never tests a stale copy of an edited .lua or .html file.
 */
module.exports = () => {
  execFileSync(process.execPath, [join(__dirname, '../../scripts/embed-assets.mjs')], { stdio: 'inherit' });
};
