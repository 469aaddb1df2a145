-- Takes over an occurrence whose run died: its record still says 'running', but its lock has been gone
-- for the grace period. The first call that finds the lock gone notes when (orphanedAt, Redis's clock, so
-- node clocks do not matter); until the grace has passed, the run's node may still come back and record
-- how it ended (its release failed while Redis was unreachable).
local lockKey = KEYS[1]
local fenceKey = KEYS[2]
local recordKey = KEYS[3]
local pausedKey = KEYS[4]
local historyKey = KEYS[5]  -- the job's run history (a list, newest first)
local owner = ARGV[1]
local ttl = ARGV[2]        -- ms
local node = ARGV[3]
local occurrence = tonumber(ARGV[4])
local maxAttempts = tonumber(ARGV[5])
local grace = tonumber(ARGV[6])  -- ms
local historyLimit = tonumber(ARGV[7])
-- Returns {fence, attempt, previousNode} when taken over; {LOCKED} while the run still holds its lock or
-- within the grace; {ALREADY_RAN, state} when there is nothing to recover (finished, moved on, or out of
-- attempts: 'crashed'); {PAUSED} while the job is paused. The crashed attempt goes into the run history.

-- @include owner-value.include.lua
-- @include job-lock.include.lua
-- @include fence.include.lua

if tonumber(redis.call('HGET', recordKey, 'occurrence')) ~= occurrence then
  return {ALREADY_RAN, ''}
end
local state = redis.call('HGET', recordKey, 'state')
if state ~= 'running' then
  return {ALREADY_RAN, state or ''}
end
local refusal = occurrenceRefusal(lockKey, pausedKey)
if refusal then
  return refusal
end
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local orphanedAt = tonumber(redis.call('HGET', recordKey, 'orphanedAt'))
if not orphanedAt then
  orphanedAt = now
  redis.call('HSET', recordKey, 'orphanedAt', now)
end
if now - orphanedAt < grace then
  return {LOCKED}
end
local crashed = redis.call('HMGET', recordKey, 'node', 'startedAt', 'attempt')
redis.call('LPUSH', historyKey, cjson.encode({type = 'run', occurrence = occurrence, node = crashed[1],
  startedAt = tonumber(crashed[2]), outcome = 'crashed', attempt = tonumber(crashed[3]), foundAt = now}))
redis.call('LTRIM', historyKey, 0, historyLimit - 1)
local attempt = tonumber(crashed[3]) + 1
if attempt > maxAttempts then
  redis.call('HSET', recordKey, 'state', 'crashed')
  return {ALREADY_RAN, 'crashed'}
end
redis.call('SET', lockKey, owner, 'PX', ttl)
local fence = drawFence(fenceKey)
local previous = crashed[1]
redis.call('HSET', recordKey, 'state', 'running', 'token', owner, 'node', node,
  'startedAt', now, 'attempt', attempt, 'previousNode', previous, 'orphanedAt', '')
return {fence, attempt, previous}
