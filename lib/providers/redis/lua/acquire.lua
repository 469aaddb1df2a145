-- Takes a free lock and draws its fencing token, in one step.
local lockKey = KEYS[1]   -- a string: its owner's value
local fenceKey = KEYS[2]  -- the name's last token, kept only while the clock is behind it (fence.include.lua)
local owner = ARGV[1]     -- its owner value (owner-value.include.lua)
local ttl = ARGV[2]       -- ms
-- Returns the fencing token, or LOCKED when the lock is held (claim-refusals.ts, put in by lua-script.ts).
-- Inline, not fence.include.lua: a skip would pay for defining its functions, and a taken lock writes no fence key.
-- @claim-refusals

if not redis.call('SET', lockKey, owner, 'NX', 'PX', ttl) then
  return LOCKED
end
-- The server's clock in µs: a name is free again only after another script or an expiry, a later µs.
local time = redis.call('TIME')
local fence = time[1] * 1000000 + time[2]
local last = tonumber(redis.call('GET', fenceKey))
if last and last >= fence then
  -- A job's token, or one drawn while the clock was behind: count on from it, on record until the clock passes.
  local ahead = last + 1 - fence
  fence = last + 1
  redis.call('SET', fenceKey, string.format('%.0f', fence), 'PX', math.floor(ahead / 1000) + 1)
end
return fence
