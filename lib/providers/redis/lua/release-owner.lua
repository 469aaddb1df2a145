-- Releases a lock by the owner its caller chose, with no lock object: one compare-and-set on owner and expiry.
local lockKey = KEYS[1]
local owner = ARGV[1]  -- the caller's owner, as lock() was given it
-- Returns HELD released, EXPIRED the lock had expired (or was released), NOT_OWNER another owner holds it.
-- @include owner-value.include.lua

local refusal = notHeldFor(redis.call('GET', lockKey), owner)
if refusal then
  return refusal
end
redis.call('DEL', lockKey)
return HELD
