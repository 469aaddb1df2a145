-- Takes over an occurrence for its next attempt. A recovery ('recover'): its run died, its record still says
-- 'running', but its lock has been gone for the grace period. The first call that finds the lock gone notes
-- when (orphanedAt, Redis's clock, so node clocks do not matter); until the grace has passed, the run's node
-- may still come back and record how it ended (its release failed while Redis was unreachable). A retry
-- ('retry'): its last attempt failed at least grace × 2^(attempt − 1) ms ago, by Redis's clock.
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
local grace = tonumber(ARGV[6])  -- ms: a recovery's grace, a retry's first backoff
local historyLimit = tonumber(ARGV[7])
local retry = ARGV[8] == 'retry'
-- Returns {fence, attempt, previousNode} when taken over; {LOCKED} while an attempt still holds its lock, runs,
-- or within the grace (backoff); {ALREADY_RAN, state} when there is nothing to take over (finished, moved on,
-- or out of attempts: 'crashed' for a recovery); {PAUSED} while the job is paused. A recovery puts the
-- crashed attempt into the run history.

-- @include owner-value.include.lua
-- @include job-lock.include.lua
-- @include fence.include.lua

if tonumber(redis.call('HGET', recordKey, 'occurrence')) ~= occurrence then
  return {ALREADY_RAN, ''}
end
local state = redis.call('HGET', recordKey, 'state')
if retry and state == 'running' then
  return {LOCKED}
end
if state ~= (retry and 'failed' or 'running') then
  return {ALREADY_RAN, state or ''}
end
local ended = redis.call('HMGET', recordKey, 'node', 'startedAt', 'attempt', 'finishedAt')
local attempt = tonumber(ended[3]) + 1
if retry and attempt > maxAttempts then
  return {ALREADY_RAN, state}
end
local refusal = occurrenceRefusal(lockKey, pausedKey)
if refusal then
  return refusal
end
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
if retry then
  if now - tonumber(ended[4]) < grace * 2 ^ (attempt - 2) then
    return {LOCKED}
  end
else
  local orphanedAt = tonumber(redis.call('HGET', recordKey, 'orphanedAt'))
  if not orphanedAt then
    orphanedAt = now
    redis.call('HSET', recordKey, 'orphanedAt', now)
  end
  if now - orphanedAt < grace then
    return {LOCKED}
  end
  redis.call('LPUSH', historyKey, cjson.encode({type = 'run', occurrence = occurrence, node = ended[1],
    startedAt = tonumber(ended[2]), finishedAt = cjson.null, durationMs = cjson.null, outcome = 'crashed',
    error = cjson.null, fencingToken = cjson.null, attempt = tonumber(ended[3]), manual = cjson.null,
    foundAt = now}))
  redis.call('LTRIM', historyKey, 0, historyLimit - 1)
  if attempt > maxAttempts then
    redis.call('HSET', recordKey, 'state', 'crashed')
    return {ALREADY_RAN, 'crashed'}
  end
end
redis.call('SET', lockKey, owner, 'PX', ttl)
local fence = drawFence(fenceKey)
local previous = ended[1]
redis.call('HSET', recordKey, 'state', 'running', 'token', owner, 'node', node,
  'startedAt', now, 'attempt', attempt, 'previousNode', previous, 'orphanedAt', '', 'finishedAt', '')
return {fence, attempt, previous}
