import { createRequire } from 'node:module';
import { CronSchedule, type CronTimeLike } from '../../lib/occurrence/cron-schedule.js';

// cron is @nestjs/schedule's dependency (CommonJS); the library only ever receives its CronTime objects.
const { CronTime } = createRequire(import.meta.url)('cron') as {
  CronTime: new (source: string, timeZone?: string, utcOffset?: number) => CronTimeLike;
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
    ['1 ms early (a clock stepped back)', '2026-01-01T00:00:09.999Z'],
    ['4 s early', '2026-01-01T00:00:06.000Z'],
  ])('attributes a tick %s to the nearest fire time', (_, firedAt) => {
    expect(everyTenSeconds.occurrenceAt(at(firedAt))).toBe(at('2026-01-01T00:00:10.000Z'));
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
