import type { INestApplicationContext } from '@nestjs/common';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { quoted } from '../core/provider/message-text.js';
import { nonEmptyStringOption, optionsObject } from '../core/provider/option-values.js';
import { SCHEDULER_LOCK_SETTINGS } from '../nest/scheduler-lock.constants.js';
import type { SchedulerLockModuleOptions } from '../nest/scheduler-lock-module-options.interface.js';
import { SCHEDULER_LOCK_MODULE_OPTIONS } from '../nest/scheduler-lock.module-definition.js';
import { createSchedulerLockSettings, type SchedulerLockSettings } from '../nest/scheduler-lock.settings.js';
import { NodeClock } from './node-clock.js';
import { TestNode } from './test-node.js';
import { TestLockProvider } from './test-lock-store.js';
import { TickRecorder } from './tick-recorder.js';

/**
 * What {@link SchedulerLockTest.override} needs of a `TestingModuleBuilder` (`@nestjs/testing`): its
 * `overrideProvider(token).useFactory(...)`.
 */
export interface ProviderOverrides<Builder> {
  overrideProvider(token: symbol | string): {
    useFactory(options: { factory: (...args: never[]) => unknown; inject?: (symbol | string)[] }): Builder;
  };
}

/** Where a node of the simulated cluster keeps its locks, and who it is; another key or value throws naming it. */
export interface TestNodeOptions {
  /** The store every node of the test shares: a {@link TestLockProvider}. */
  store: TestLockProvider;
  /** This node's name, in history and for the console (`node`): a non-empty string. */
  node: string;
}

const SUBJECT = 'SchedulerLockTest.override() options';
const TEST_NODE_OPTIONS: readonly (keyof TestNodeOptions)[] = ['store', 'node'];

/** Options only a Redis store reads (or, `historyLimit`, a store of its own): a test node's store is shared. */
const STORE_ONLY_OPTIONS = ['redis', 'keyPrefix', 'minReplicasToAck', 'replicaAckTimeout', 'historyLimit'] as const;

/**
 * The entry of `nest-scheduler-lock/testing`, after `@nestjs/testing`'s `Test`: {@link override} puts an app's
 * `SchedulerLockModule` on a {@link TestLockProvider} (whatever its `redis` or `provider` option says; its other
 * options stay), and {@link node} drives that app's jobs.
 */
export class SchedulerLockTest {
  /**
   * Builds the app's `SchedulerLockModule` on `store` as the node `node`: no Redis connection, the same
   * executor, registry proxy and occurrence logic as in production. Returns the builder, for `.compile()`.
   */
  static override<Builder>(builder: ProviderOverrides<Builder>, options: TestNodeOptions): Builder {
    const { store, node } = testNodeOptions(options);
    return builder.overrideProvider(SCHEDULER_LOCK_SETTINGS).useFactory({
      factory: async (options: SchedulerLockModuleOptions): Promise<SchedulerLockSettings> => {
        const kept: SchedulerLockModuleOptions = { ...options };
        for (const option of STORE_ONLY_OPTIONS) delete kept[option];
        const settings = await createSchedulerLockSettings({
          ...kept,
          provider: store.provider(node),
          node,
          instrumentation: new TickRecorder(options.instrumentation),
        });
        return { ...settings, clock: new NodeClock() };
      },
      inject: [SCHEDULER_LOCK_MODULE_OPTIONS],
    });
  }

  /**
   * The test node of `app` (a compiled `TestingModule` or an app), initialised if it was not: its ticks, its
   * console, published to the store at once.
   *
   * @throws Error when `app` was not built with {@link override}.
   */
  static node(app: INestApplicationContext): Promise<TestNode> {
    return TestNode.of(app);
  }
}

function testNodeOptions(options: TestNodeOptions): TestNodeOptions {
  const { store, node } = optionsObject(options, TEST_NODE_OPTIONS, SUBJECT);
  if (!(store instanceof TestLockProvider)) {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: store must be a TestLockProvider (got ${quoted(store)})`);
  }
  if (node === undefined) throw new SchedulerLockConfigurationError(`${SUBJECT}: node is required`);
  return { store, node: nonEmptyStringOption(node, '', 'node', SUBJECT) };
}
