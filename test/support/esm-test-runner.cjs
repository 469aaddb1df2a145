const { dirname, join } = require('node:path');
const vm = require('node:vm');
const { EmittingTestRunner, default: TestRunner } = require('jest-runner');
const { Worker } = require('jest-worker');
const Emittery = require('emittery');

/** The Node flag that gives Jest's runtime ES modules (vm.SourceTextModule); the specs are ES modules. */
const ESM_FLAG = '--experimental-vm-modules';
/** What each of Jest's worker processes runs: jest-runner's own, as its TestRunner starts them. */
const TEST_WORKER = join(dirname(require.resolve('jest-runner')), 'testWorker.js');
/** The events a runner passes on to Jest's reporters. */
const EVENTS = ['test-file-start', 'test-file-success', 'test-file-failure', 'test-case-start', 'test-case-result'];

/** A system spec (its tier is its Jest project, test/tiers.mjs): several processes, private servers, real time. */
const isSystem = (test) => test.context.config.displayName?.name === 'system';

/**
 * Jest's runner, with two changes:
 * - from a plain `npx jest <file>` (no ESM flag in this process) the specs run in worker processes started with
 *   the flag (jest-worker forks with this process's execArgv), never in band;
 * - on several workers, a system spec never runs beside another system spec: their processes and real-time
 *   waits would share the cores. The other workers take unit and integration specs meanwhile, in Jest's order
 *   (slowest first, as the last run timed them).
 */
class SuiteTestRunner extends EmittingTestRunner {
  #events = new Emittery();

  on(event, listener) {
    return this.#events.on(event, listener);
  }

  async runTests(tests, watcher, options) {
    let serial = options.serial;
    if (!vm.SourceTextModule) {
      if (!process.execArgv.includes(ESM_FLAG)) process.execArgv.push(ESM_FLAG);
      serial = false;
    }
    if (serial || this._globalConfig.maxWorkers < 2) return this.#runWithJest(tests, watcher, serial);
    return this.#runInLanes(tests, watcher);
  }

  /** Jest's own runner, its events passed on. */
  async #runWithJest(tests, watcher, serial) {
    const runner = new TestRunner(this._globalConfig, this._context);
    const unsubscribes = EVENTS.map((event) => runner.on(event, (payload) => this.#events.emit(event, payload)));
    try {
      await runner.runTests(tests, watcher, { serial });
    } finally {
      unsubscribes.forEach((unsubscribe) => unsubscribe());
    }
  }

  /** One lane per worker; each lane takes the first waiting spec it may run: no second system spec. */
  async #runInLanes(tests, watcher) {
    const worker = this.#startWorkers(tests);
    const waiting = [...tests];
    let systemRunning = false;
    /** The lanes waiting for the system spec to end, with only system specs left to take. */
    const idle = [];
    const lane = async () => {
      while (waiting.length > 0 && !watcher.isInterrupted()) {
        const index = waiting.findIndex((test) => !(systemRunning && isSystem(test)));
        if (index === -1) {
          await new Promise((resolve) => idle.push(resolve));
          continue;
        }
        const [test] = waiting.splice(index, 1);
        if (isSystem(test)) systemRunning = true;
        await this.#runInWorker(worker, test);
        if (isSystem(test)) {
          systemRunning = false;
          idle.splice(0).forEach((resolve) => resolve());
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: this._globalConfig.maxWorkers }, lane));
    } finally {
      const { forceExited } = await worker.end();
      if (forceExited)
        console.error('A Jest worker did not exit after its specs and was killed: a spec leaks a handle.');
    }
  }

  #startWorkers(tests) {
    const resolvers = new Map();
    for (const { context } of tests) {
      if (resolvers.has(context.config.id)) continue;
      resolvers.set(context.config.id, { config: context.config, serializableModuleMap: context.moduleMap.toJSON() });
    }
    const { maxWorkers, workerIdleMemoryLimit, workerThreads } = this._globalConfig;
    const worker = new Worker(TEST_WORKER, {
      enableWorkerThreads: workerThreads,
      exposedMethods: ['worker'],
      forkOptions: { serialization: 'json', stdio: 'pipe' },
      idleMemoryLimit: typeof workerIdleMemoryLimit === 'number' ? workerIdleMemoryLimit : undefined,
      maxRetries: 3,
      numWorkers: maxWorkers,
      setupArgs: [{ serializableResolvers: [...resolvers.values()] }],
    });
    worker.getStdout()?.pipe(process.stdout);
    worker.getStderr()?.pipe(process.stderr);
    return worker;
  }

  async #runInWorker(worker, test) {
    await this.#events.emit('test-file-start', [test]);
    const context = {
      ...this._context,
      changedFiles: this._context.changedFiles && [...this._context.changedFiles],
      sourcesRelatedToTestsInChangedFiles: this._context.sourcesRelatedToTestsInChangedFiles && [
        ...this._context.sourcesRelatedToTestsInChangedFiles,
      ],
    };
    const run = worker.worker({
      config: test.context.config,
      context,
      globalConfig: this._globalConfig,
      path: test.path,
    });
    run.UNSTABLE_onCustomMessage?.(([event, payload]) => this.#events.emit(event, payload));
    const outcome = await run.then(
      (result) => ['test-file-success', [test, result]],
      (error) => ['test-file-failure', [test, error]],
    );
    await this.#events.emit(...outcome);
  }
}

module.exports = SuiteTestRunner;
