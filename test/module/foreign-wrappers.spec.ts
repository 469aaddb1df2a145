import { Injectable } from '@nestjs/common';
import { Cron, Interval, SchedulerRegistry } from '@nestjs/schedule';
import { InMemoryLockProvider, SchedulerLock } from '../../lib/index.js';
import { closeSchedulerApps, startSchedulerApp, startupError } from '../support/scheduler-app.js';

// Something that wraps jobs at SchedulerRegistry, installed before the module (a prototype patch), may replace
// the callback the module locked while a job is registered. Whether its replacement still calls the locked
// tick cannot be known, so the startup is refused, naming the job: a locked job never runs unlocked.

afterEach(closeSchedulerApps);
const { addCronJob, addInterval } = SchedulerRegistry.prototype;
afterEach(() => Object.assign(SchedulerRegistry.prototype, { addCronJob, addInterval }));

const options = { provider: new InMemoryLockProvider(), defaultLockAtMostFor: '10s' } as const;

@Injectable()
class Report {
  @SchedulerLock()
  @Cron('0 0 * * * *', { name: 'hourly-report' })
  hourly() {}
}

@Injectable()
class Sweep {
  @SchedulerLock()
  @Interval('sweep', 60_000)
  sweep() {}
}

it('refuses the app when a registry wrapper replaced a locked cron job’s tick', async () => {
  SchedulerRegistry.prototype.addCronJob = function (this: SchedulerRegistry, name, job) {
    const cron = job as unknown as { _callbacks: Array<() => unknown> };
    cron._callbacks = [() => undefined]; // its own callback, in place of the locked tick
    return addCronJob.call(this, name, job);
  };
  const error = await startupError({ lock: options, providers: [Report] });
  expect(error.message).toMatch(
    /^The locked job "hourly-report" was registered, but something that wraps SchedulerRegistry/,
  );
  expect(error.message).toContain('the job could run unlocked, so the app is refused');
});

it('refuses the app when a registry wrapper replaced a locked interval’s tick', async () => {
  SchedulerRegistry.prototype.addInterval = function (this: SchedulerRegistry, name, timer) {
    (timer as unknown as { _onTimeout: () => unknown })._onTimeout = () => undefined;
    return addInterval.call(this, name, timer);
  };
  const error = await startupError({ lock: options, providers: [Sweep] });
  expect(error.message).toMatch(/^The locked job "sweep" was registered, but something that wraps SchedulerRegistry/);
});

it('accepts a registry wrapper that leaves the locked tick in place', async () => {
  const registered: string[] = [];
  SchedulerRegistry.prototype.addInterval = function (this: SchedulerRegistry, name, timer) {
    registered.push(name);
    return addInterval.call(this, name, timer);
  };
  await startSchedulerApp({ lock: options, providers: [Sweep] });
  expect(registered).toEqual(['sweep']);
});
