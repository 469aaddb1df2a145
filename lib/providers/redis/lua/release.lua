-- Releases a lock if the caller still owns it: deletes it, or keeps it `keepFor` ms more (lockAtLeastFor).
-- With a job record whose run is the caller's, records how the run ended, in the same step.
local lockKey = KEYS[1]
local recordKey = KEYS[2]  -- optional: the job record hash
local owner = ARGV[1]
local keepFor = ARGV[2]    -- ms to keep; '0' or absent deletes
local outcome = ARGV[3]    -- 'succeeded' | 'failed', with recordKey
-- Returns 1 released, 0 the lock had expired, -1 another owner holds it.
if recordKey and redis.call('HGET', recordKey, 'token') == owner then
  local time = redis.call('TIME')
  redis.call('HSET', recordKey, 'state', outcome, 'finishedAt', time[1] * 1000 + math.floor(time[2] / 1000))
end
local holder = redis.call('GET', lockKey)
if holder ~= owner then
  return holder and -1 or 0 -- holder is false once the lock has expired
end
if not keepFor or keepFor == '0' then
  redis.call('DEL', lockKey)
else
  redis.call('PEXPIRE', lockKey, keepFor)
end
return 1
