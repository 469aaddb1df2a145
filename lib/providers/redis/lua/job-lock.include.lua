-- Shared by the scripts that take a job's lock; the loader (lua-script.ts) puts it where a script says
-- `-- @include job-lock.include.lua`, after owner-value.include.lua.

-- The scripts' named replies for a claim refused (a fence taken is positive): a run holds the lock; the
-- occurrence (or a later one) was claimed already, or has nothing to recover; an operator paused the job.
-- LuaScript (lua-script.ts) defines them here from claim-refusals.ts; claimRefusal (redis-scripts.ts) decodes.
-- @claim-refusals

-- Why a job's lock may not be taken now: LOCKED (a run holds it) or PAUSED (an operator paused the job,
-- which a run the operator asked for ignores); nil when it may. One MGET reads the lock and the pause marker,
-- which share the lock's Cluster slot. A lock an operator force-released (its marker kept until the old lock
-- would have expired, so that its holder learns it lost it) counts as free.
local function jobLockRefusal(lockKey, pausedKey, manual)
  local values = redis.call('MGET', lockKey, pausedKey)
  local holder = values[1]
  if holder and not forceUnlocked(holder) then
    return LOCKED
  end
  if values[2] and not manual then
    return PAUSED
  end
end

-- The same for an occurrence script, as its reply: {LOCKED} or {PAUSED}.
local function occurrenceRefusal(lockKey, pausedKey)
  local refusal = jobLockRefusal(lockKey, pausedKey, false)
  if refusal then
    return {refusal}
  end
end
