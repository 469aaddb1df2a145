-- Takes a free lock and draws its fencing token, in one step.
local lockKey = KEYS[1]   -- a string: its owner's value
local fenceKey = KEYS[2]  -- the lock's last token, which expires with it (fence.include.lua)
local owner = ARGV[1]     -- its owner value (owner-value.include.lua)
local ttl = ARGV[2]       -- ms
-- Returns the fencing token, or LOCKED when the lock is held (claim-refusals.ts, put in by lua-script.ts).
-- @claim-refusals
-- @include fence.include.lua

if redis.call('SET', lockKey, owner, 'NX', 'PX', ttl) then
  return drawFence(fenceKey, ttl)
end
return LOCKED
