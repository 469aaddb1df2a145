-- Shared by the scripts that end a run (release-recording.lua, finish.lua); the loader (lua-script.ts) puts it
-- where a script says `-- @include record-outcome.include.lua`.

-- Records how the run ended in its job record, if the record is still this run's (its token is the owner
-- value): a record another node took over is left alone.
local function recordOutcome(recordKey, owner, outcome)
  if redis.call('HGET', recordKey, 'token') == owner then
    local time = redis.call('TIME')
    redis.call('HSET', recordKey, 'state', outcome, 'finishedAt', time[1] * 1000 + math.floor(time[2] / 1000))
  end
end
