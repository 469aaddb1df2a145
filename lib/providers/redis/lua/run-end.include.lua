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

-- Deletes the lock if `owner` holds it, or keeps it `keepFor` ms more (lockAtLeastFor; '0' or nil deletes).
-- Returns 1 released, 0 the lock had expired, -1 another owner holds it.
local function releaseOwned(lockKey, owner, keepFor)
  local holder = redis.call('GET', lockKey)
  if holder ~= owner then
    return holder and -1 or 0 -- holder is false once the lock has expired
  end
  if not keepFor or keepFor == '0' then
    redis.call('DEL', lockKey)
  else
    redis.call('PEXPIRE', lockKey, keepFor)
  end
  return 1
end
