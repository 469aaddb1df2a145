import { describeEntryTypes } from '../support/entry-types.js';

/** A test's use of the kit: a node on the test store, a tick, the assertion, a held lock. */
const APP = `
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { SchedulerLockModule } from 'nest-scheduler-lock';
import { SchedulerLockTest, TestLockStore, type TestRun, type TickOutcome } from 'nest-scheduler-lock/testing';

export async function check(): Promise<[TickOutcome, TestRun]> {
  const store = new TestLockStore();
  const builder = Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), SchedulerLockModule.forRoot({ redis: 'redis://x', defaultLockAtMostFor: '1m' })],
  });
  const app = await SchedulerLockTest.override(builder, { store, lockedBy: 'node-a' }).compile();
  const node = await SchedulerLockTest.node(app);
  const held = await store.hold('report', { as: 'node-b', for: '10m' });
  await held.release();
  const outcome = await node.tick('report', { at: new Date() });
  if (outcome.status === 'skipped') outcome.reason satisfies string;
  return [outcome, await store.expectRanOnce('report', new Date())];
}
`;

describeEntryTypes('nest-scheduler-lock/testing', APP, 'dist/cjs/testing/test-node.d.ts', ['@nestjs/testing']);
