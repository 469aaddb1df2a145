-- Takes over an occurrence whose run died: its record still says 'running', but its lock has been gone
-- for the grace period. The first call that finds the lock gone notes when (orphanedAt, Redis's clock, so
-- node clocks do not matter); until the grace has passed, the run's node may still come back and record
-- how it ended (its release failed while Redis was unreachable).
-- KEYS[1] lock   KEYS[2] fencing counter   KEYS[3] job record hash
-- ARGV[1] owner value   ARGV[2] TTL in ms   ARGV[3] lockedBy   ARGV[4] occurrence   ARGV[5] max attempts
-- ARGV[6] grace in ms
-- Returns {fence, attempt, previousHolder} when taken over; {0} while the run still holds its lock or
-- within the grace; {-1, state} when there is nothing to recover (finished, moved on, or out of
-- attempts: 'crashed').
if tonumber(redis.call('HGET', KEYS[3], 'occurrence')) ~= tonumber(ARGV[4]) then
  return {-1, ''}
end
local state = redis.call('HGET', KEYS[3], 'state')
if state ~= 'running' then
  return {-1, state or ''}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0}
end
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local orphanedAt = tonumber(redis.call('HGET', KEYS[3], 'orphanedAt'))
if not orphanedAt then
  orphanedAt = now
  redis.call('HSET', KEYS[3], 'orphanedAt', now)
end
if now - orphanedAt < tonumber(ARGV[6]) then
  return {0}
end
local attempt = tonumber(redis.call('HGET', KEYS[3], 'attempt')) + 1
if attempt > tonumber(ARGV[5]) then
  redis.call('HSET', KEYS[3], 'state', 'crashed')
  return {-1, 'crashed'}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local fence = redis.call('INCR', KEYS[2])
local previous = redis.call('HGET', KEYS[3], 'runBy')
redis.call('HSET', KEYS[3], 'state', 'running', 'token', ARGV[1], 'runBy', ARGV[3],
  'startedAt', now, 'attempt', attempt, 'previousHolder', previous, 'orphanedAt', '')
return {fence, attempt, previous}
