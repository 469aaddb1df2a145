const vm = require('node:vm');
const TestRunner = require('jest-runner').default;

/** The Node flag that gives Jest's runtime ES modules (vm.SourceTextModule); the specs are ES modules. */
const ESM_FLAG = '--experimental-vm-modules';

/**
 * Jest's default runner, made to work from a plain `npx jest <file>`: when this process lacks the ESM flag, the
 * specs run in worker processes started with it (jest-worker forks with this process's execArgv), never in band.
 * Under `node --experimental-vm-modules jest.js` (npm test) it changes nothing.
 */
class EsmTestRunner extends TestRunner {
  runTests(tests, watcher, options) {
    if (vm.SourceTextModule) return super.runTests(tests, watcher, options);
    if (!process.execArgv.includes(ESM_FLAG)) process.execArgv.push(ESM_FLAG);
    return super.runTests(tests, watcher, { ...options, serial: false });
  }
}

module.exports = EsmTestRunner;
