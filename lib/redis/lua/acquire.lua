-- Takes a free lock and stamps it with the next fencing token, in one step.
-- KEYS[1] lock hash   KEYS[2] fencing counter (no TTL, outlives the lock)
-- ARGV[1] owner token   ARGV[2] TTL in ms   ARGV[3] lockedBy
-- Returns the fencing token, or false when the lock is held.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local fence = redis.call('INCR', KEYS[2])
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'lockedBy', ARGV[3], 'lockedAt', now, 'fence', fence)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return fence
