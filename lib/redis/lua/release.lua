-- Releases a lock if the caller still owns it: deletes it, or keeps it ARGV[2] ms more (lockAtLeastFor).
-- With a job record (KEYS[2]) whose run is the caller's, records how the run ended, in the same step.
-- KEYS[1] lock   KEYS[2] optional job record hash
-- ARGV[1] owner value   ARGV[2] ms to keep ('0' or absent deletes)
-- ARGV[3] outcome ('succeeded' | 'failed', with KEYS[2])
-- Returns 1 released, 0 the lock had expired, -1 another owner holds it.
if KEYS[2] and redis.call('HGET', KEYS[2], 'token') == ARGV[1] then
  local time = redis.call('TIME')
  redis.call('HSET', KEYS[2], 'state', ARGV[3], 'finishedAt', time[1] * 1000 + math.floor(time[2] / 1000))
end
local owner = redis.call('GET', KEYS[1])
if owner ~= ARGV[1] then
  return owner and -1 or 0 -- owner is false once the lock has expired
end
if not ARGV[2] or ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
