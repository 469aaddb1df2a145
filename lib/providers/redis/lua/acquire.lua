-- Takes a free lock and draws its fencing token, in one step.
local lockKey = KEYS[1]   -- a string: its owner's value
local fenceKey = KEYS[2]  -- the fencing counter (no TTL, outlives the lock)
local owner = ARGV[1]     -- its owner value (owner-value.include.lua)
local ttl = ARGV[2]       -- ms
-- Returns the fencing token, or 0 when the lock is held.
if redis.call('SET', lockKey, owner, 'NX', 'PX', ttl) then
  return redis.call('INCR', fenceKey)
end
return 0
