-- A lock name's fencing tokens, with no store-wide counter (a script's keys share one Cluster slot): the
-- server's clock in µs, or one more than the last token still on record (the fence key), whichever is greater.
-- Tokens grow as long as the server's clock does not go back. The loader (lua-script.ts) puts this where a
-- script says `-- @include fence.include.lua`.

local function clockMicros()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- Draws the next token of a job's name and records it at `fenceKey`, kept (a plain lock's: acquire.lua).
local function drawFence(fenceKey)
  local fence = math.max(clockMicros(), (tonumber(redis.call('GET', fenceKey)) or 0) + 1)
  -- %.0f: tostring() would write 1.7e+15 and lose the digits.
  redis.call('SET', fenceKey, string.format('%.0f', fence))
  return fence
end
