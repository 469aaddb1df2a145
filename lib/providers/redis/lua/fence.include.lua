-- A lock name's fencing tokens, with no store-wide counter (a script's keys share one Cluster slot): the
-- server's clock in µs, or one more than the last token still on record (the fence key), whichever is greater.
-- Tokens grow as long as the server's clock does not go back. The loader (lua-script.ts) puts this where a
-- script says `-- @include fence.include.lua`.

local function clockMicros()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- Draws the next token of `fenceKey`'s name and records it there, for `ttl` ms (nil: no TTL, a job's).
local function drawFence(fenceKey, ttl)
  local fence = math.max(clockMicros(), (tonumber(redis.call('GET', fenceKey)) or 0) + 1)
  -- %.0f: tostring() would write 1.7e+15 and lose the digits.
  local value = string.format('%.0f', fence)
  if ttl then
    redis.call('SET', fenceKey, value, 'PX', ttl)
  else
    redis.call('SET', fenceKey, value)
  end
  return fence
end

-- Forgets `fenceKey` once its lock is released (or kept `keepFor` ms more, lockAtLeastFor), keeping it no longer
-- than its token is ahead of the clock (a name taken twice within one µs), so the next token still exceeds it.
local function dropFence(fenceKey, keepFor)
  local fence = tonumber(redis.call('GET', fenceKey))
  if not fence then
    return
  end
  local ahead = fence - clockMicros()
  local keep = math.max(tonumber(keepFor) or 0, ahead >= 0 and math.floor(ahead / 1000) + 1 or 0)
  if keep > 0 then
    redis.call('PEXPIRE', fenceKey, keep)
  else
    redis.call('DEL', fenceKey)
  end
end
