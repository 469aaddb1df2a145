-- Shared by the scripts that end a run (release.lua, finish.lua); the loader (lua-script.ts) puts it where a
-- script says `-- @include run-end.include.lua`.

-- Records how the run ended in its job record, if the record is still this run's (its token is the owner
-- value): a record another node took over is left alone.
local function recordOutcome(recordKey, owner, outcome)
  if redis.call('HGET', recordKey, 'token') == owner then
    local time = redis.call('TIME')
    redis.call('HSET', recordKey, 'state', outcome, 'finishedAt', time[1] * 1000 + math.floor(time[2] / 1000))
  end
end

-- The owner checks' named replies (HELD, EXPIRED, NOT_OWNER): LuaScript (lua-script.ts) defines them here from
-- owner-checks.ts; ownerOutcome (redis-scripts.ts) decodes.
-- @owner-checks

-- Deletes the lock if `owner` holds it, or keeps it `keepFor` ms more (lockAtLeastFor; '0' or nil deletes).
-- Returns HELD released, EXPIRED the lock had expired, NOT_OWNER another owner holds it.
local function releaseOwned(lockKey, owner, keepFor)
  local holder = redis.call('GET', lockKey)
  if holder ~= owner then
    return holder and NOT_OWNER or EXPIRED -- holder is false once the lock has expired
  end
  if not keepFor or keepFor == '0' then
    redis.call('DEL', lockKey)
  else
    redis.call('PEXPIRE', lockKey, keepFor)
  end
  return HELD
end
