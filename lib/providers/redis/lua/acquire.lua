-- Takes a free lock and draws its fencing token, in one step.
local lockKey = KEYS[1]   -- a string: 'fenced:<s>:<µs>:<owner value>', its token and its owner (fenced-value.ts)
local fenceKey = KEYS[2]  -- the name's last token, kept only while the clock is behind it (fence.include.lua)
local owner = ARGV[1]     -- its owner value (owner-value.include.lua)
local ttl = ARGV[2]       -- ms
-- Returns the fencing token, or LOCKED when the lock is held (claim-refusals.ts, put in by lua-script.ts).
-- Inline, not fence.include.lua: a skip would pay for defining its functions, and a taken lock writes no fence key.
-- @claim-refusals

-- EXISTS first, of a key of any type: a skip costs one integer reply, less than a SET NX or an MGET.
if redis.call('EXISTS', lockKey) == 1 then
  return LOCKED
end
-- The server's clock in µs: a name is free again only after another script or an expiry, a later µs.
local time = redis.call('TIME')
local seconds, micros = time[1], time[2]
local fence = seconds * 1000000 + micros
local last = tonumber(redis.call('GET', fenceKey))
if last and last >= fence then
  -- A job's token, or one drawn while the clock was behind: count on from it, on record until the clock passes.
  local ahead = last + 1 - fence
  fence = last + 1
  redis.call('SET', fenceKey, string.format('%.0f', fence), 'PX', math.floor(ahead / 1000) + 1)
  seconds, micros = string.format('%.0f', math.floor(fence / 1000000)), string.format('%.0f', fence % 1000000)
end
-- The token in the lock's value, for operators (lockState): the clock's own digits, no number formatted.
redis.call('SET', lockKey, 'fenced:' .. seconds .. ':' .. micros .. ':' .. owner, 'PX', ttl)
return fence
