import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LockProviderMisconfiguredError, LockProviderUnavailableError, SchedulerLock } from '../../lib/index.js';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { events } from '../support/lock-events.js';
import type { SchedulerApp } from '../support/scheduler-app.js';

/** Enough 100 ms ticks to show that a failure is not logged once per tick. */
const WATCHED_TICKS = 8;

/** A locked job ticking every 100 ms, counting its runs. */
@Injectable()
export class IntervalJob {
  runs = 0;

  @SchedulerLock()
  @Interval(100)
  tick() {
    this.runs += 1;
  }
}

/**
 * Starts an app with {@link IntervalJob} (`startApp`), watches {@link WATCHED_TICKS} of its ticks and
 * checks each was skipped for a store error (a LockProviderUnavailableError), the job never ran, the app's
 * only error line is one matching `line`, and ioredis printed nothing to the console (no unhandled
 * error events, no warnings). Resolves to the app.
 */
export async function expectTicksSkippedWithOneLine(
  startApp: () => Promise<SchedulerApp>,
  line: string | RegExp,
): Promise<SchedulerApp> {
  const printed = [jest.spyOn(console, 'error'), jest.spyOn(console, 'warn')];
  try {
    const app = await startApp();
    const skipped = (await events(
      app.history$,
      jobEvent('skipped', 'IntervalJob.tick'),
      WATCHED_TICKS,
    )) as LockEventOf<'skipped'>[];

    expect(skipped.map((event) => event.reason)).toEqual(Array(WATCHED_TICKS).fill('provider-error'));
    for (const { error } of skipped) expect(error).toBeInstanceOf(LockProviderUnavailableError);
    expect(app.get(IntervalJob).runs).toBe(0);
    expect(app.logs.texts('error')).toEqual([typeof line === 'string' ? line : expect.stringMatching(line)]);
    expect(printed.flatMap((spy) => spy.mock.calls)).toEqual([]);
    return app;
  } finally {
    printed.forEach((spy) => spy.mockRestore());
  }
}

/** Everything the app logged and emitted, as text: to check that no password appears in it. */
export function everythingSaid(app: SchedulerApp): string[] {
  const logged = app.logs.entries.map(({ message }) => String(message));
  const emitted = app.recorded.map(
    (event) => `${JSON.stringify(event)} ${'error' in event ? String(event.error) : ''}`,
  );
  return [...logged, ...emitted];
}

/**
 * Starts an app that its store's startup check must stop, and checks why: a LockProviderMisconfiguredError
 * whose one-line message matches `line`, and nothing printed to the console by ioredis. Resolves to it.
 */
export async function expectStartupRefused(
  startApp: () => Promise<SchedulerApp>,
  line: RegExp,
): Promise<LockProviderMisconfiguredError> {
  const printed = [jest.spyOn(console, 'error'), jest.spyOn(console, 'warn')];
  try {
    const error = await startApp().then(
      () => new Error('the app started'),
      (rejection: unknown) => rejection as Error,
    );

    expect(error).toBeInstanceOf(LockProviderMisconfiguredError);
    expect(error.message).toMatch(line);
    expect(error.message).not.toContain('\n');
    expect(printed.flatMap((spy) => spy.mock.calls)).toEqual([]);
    return error as LockProviderMisconfiguredError;
  } finally {
    printed.forEach((spy) => spy.mockRestore());
  }
}

/** The startup check's message for a store at `endpoint` refused for `cause` (a regular expression's source). */
export function refusedStartup(endpoint: string, cause: string): RegExp {
  return new RegExp(
    `^Redis ${endpoint.replaceAll('.', '\\.')} cannot serve the locks \\(${cause}\\): fix the configuration$`,
  );
}
