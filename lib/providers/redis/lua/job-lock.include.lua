-- Shared by the scripts that take a job's lock; the loader (lua-script.ts) puts it where a script says
-- `-- @include job-lock.include.lua`, after owner-value.include.lua.

-- Why a job's lock may not be taken now: 'held' (a run holds it) or 'paused' (an operator paused the job,
-- which a run the operator asked for ignores); nil when it may. One MGET reads the lock and the pause marker,
-- which share the lock's Cluster slot. A lock an operator force-released (its marker kept until the old lock
-- would have expired, so that its holder learns it lost it) counts as free.
local function jobLockRefusal(lockKey, pausedKey, manual)
  local values = redis.call('MGET', lockKey, pausedKey)
  local holder = values[1]
  if holder and not forceUnlocked(holder) then
    return 'held'
  end
  if values[2] and not manual then
    return 'paused'
  end
end

-- The same for an occurrence script, as its reply: {0} a run holds the lock, {-2} the job is paused.
local function occurrenceRefusal(lockKey, pausedKey)
  local refusal = jobLockRefusal(lockKey, pausedKey, false)
  if refusal then
    return refusal == 'held' and {0} or {-2}
  end
end
