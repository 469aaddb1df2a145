import { createRequire } from 'node:module';
import { CronSchedule, type CronTimeLike } from '../../lib/occurrence/cron-schedule.js';

// cron is @nestjs/schedule's dependency (CommonJS); the library only ever receives its CronTime objects.
const { CronTime } = createRequire(import.meta.url)('cron') as {
  CronTime: new (source: string | Date, timeZone?: string, utcOffset?: number) => CronTimeLike;
};

const at = (iso: string) => Date.parse(iso);

describe('CronSchedule', () => {
  const everyTenSeconds = new CronSchedule(new CronTime('*/10 * * * * *'));

  it('measures the shortest gap between fire times', () => {
    expect(everyTenSeconds.minGap).toBe(10_000);
    expect(new CronSchedule(new CronTime('0 0,5 * * * *')).minGap).toBe(5 * 60_000);
  });

  it.each([
    ['on time', '2026-01-01T00:00:10.000Z'],
    ['a few ms late', '2026-01-01T00:00:10.004Z'],
    ['4 s late (a lagging clock or a blocked event loop)', '2026-01-01T00:00:14.000Z'],
    ['9.9 s late, most of a gap (a thousand jobs due in the same turn)', '2026-01-01T00:00:19.900Z'],
  ])('attributes a tick %s to its own fire time', (_, firedAt) => {
    const schedule = new CronSchedule(new CronTime('*/10 * * * * *'));
    expect(schedule.occurrenceAt(at(firedAt))).toBe(at('2026-01-01T00:00:10.000Z'));
  });

  it('never attributes a tick to a fire time its clock has not reached', () => {
    const schedule = new CronSchedule(new CronTime('*/10 * * * * *'));
    // cron never fires early; a tick before the fire time is one fired by hand (job.fireOnTick()).
    expect(schedule.occurrenceAt(at('2026-01-01T00:00:09.999Z'))).toBe(at('2026-01-01T00:00:00.000Z'));
    expect(schedule.occurrenceAt(at('2026-01-01T00:00:10.000Z'))).toBe(at('2026-01-01T00:00:10.000Z'));
    // Ticks in order, a tick late by more than a gap, and a clock stepped back: each gets the latest fire time passed.
    expect(schedule.occurrenceAt(at('2026-01-01T00:00:20.300Z'))).toBe(at('2026-01-01T00:00:20.000Z'));
    expect(schedule.occurrenceAt(at('2026-01-01T00:01:05.000Z'))).toBe(at('2026-01-01T00:01:00.000Z'));
    expect(schedule.occurrenceAt(at('2026-01-01T00:00:35.000Z'))).toBe(at('2026-01-01T00:00:30.000Z'));
  });

  it('shares one schedule between jobs of the same expression and zone', () => {
    const schedule = CronSchedule.of(new CronTime('*/10 * * * * *', 'UTC'));
    expect(CronSchedule.of(new CronTime('*/10 * * * * *', 'UTC'))).toBe(schedule);
    expect(CronSchedule.of(new CronTime('*/10 * * * * *', 'Europe/Paris'))).not.toBe(schedule);
    expect(CronSchedule.of(new CronTime('*/20 * * * * *', 'UTC'))).not.toBe(schedule);
  });

  it('knows the one fire time of a job scheduled at a date', () => {
    const fireAt = Date.now() + 60_000;
    const oneShot = CronSchedule.of(new CronTime(new Date(fireAt)));
    expect(oneShot.minGap).toBe(Infinity);
    expect(oneShot.occurrenceAt(fireAt + 3)).toBe(fireAt);
    expect(oneShot.nextAfter(fireAt)).toBe(Infinity);
    expect(oneShot.latestWithin(fireAt + 1_000, 60_000)).toBe(fireAt);
  });

  it('follows the job time zone', () => {
    const nineInNewYork = new CronSchedule(new CronTime('0 0 9 * * *', 'America/New_York'));
    expect(new Date(nineInNewYork.occurrenceAt(at('2026-01-15T14:00:03.000Z'))).toISOString()).toBe(
      '2026-01-15T14:00:00.000Z',
    );
    const nineAtPlusTwo = new CronSchedule(new CronTime('0 0 9 * * *', undefined, 120));
    expect(new Date(nineAtPlusTwo.occurrenceAt(at('2026-01-15T07:00:01.000Z'))).toISOString()).toBe(
      '2026-01-15T07:00:00.000Z',
    );
  });

  it('finds the latest fire time within a window, also far back', () => {
    expect(everyTenSeconds.latestWithin(at('2026-01-01T00:00:25.000Z'), 60_000)).toBe(at('2026-01-01T00:00:20.000Z'));
    expect(everyTenSeconds.latestWithin(at('2026-01-01T00:00:20.000Z'), 60_000)).toBe(at('2026-01-01T00:00:20.000Z'));
    const daily = new CronSchedule(new CronTime('0 30 6 * * *', 'UTC'));
    expect(daily.latestWithin(at('2026-01-02T05:00:00.000Z'), 36 * 3_600_000)).toBe(at('2026-01-01T06:30:00.000Z'));
    expect(daily.latestWithin(at('2026-01-02T05:00:00.000Z'), 3_600_000)).toBeUndefined();
  });
});
