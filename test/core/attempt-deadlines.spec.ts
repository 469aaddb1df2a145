import { jest } from '@jest/globals';
import type { Redis } from 'ioredis';
import { AttemptDeadlines } from '../../lib/core/executor/attempt-deadlines.js';
import { LockProviderUnavailableError } from '../../lib/core/provider/errors.js';
import { sharedRedis } from '../support/shared-redis.js';
import { blockFor } from '../support/timing.js';

describe('AttemptDeadlines', () => {
  let redis: Redis;

  beforeAll(async () => {
    redis = sharedRedis();
    await redis.ping();
  });

  afterAll(() => redis.quit());

  it('takes an answer that arrived in time but was read late, because the event loop was blocked', async () => {
    const deadlines = new AttemptDeadlines(100);
    const late = jest.fn();
    // Redis answers within a millisecond, into the socket; the deadline passes before Node reads it.
    const attempt = deadlines.within(redis.ping(), late);
    blockFor(400);
    await expect(attempt).resolves.toBe('PONG');
    expect(late).not.toHaveBeenCalled();
  });

  it('times out an attempt left unanswered, and hands its late answer over', async () => {
    const deadlines = new AttemptDeadlines(50);
    let answer!: (value: string) => void;
    const late = jest.fn();
    const attempt = deadlines.within(new Promise<string>((resolve) => (answer = resolve)), late);
    await expect(attempt).rejects.toThrow(LockProviderUnavailableError);
    answer('too late');
    await Promise.resolve();
    expect(late).toHaveBeenCalledWith('too late');
  });
});
