-- Shared by the scripts that take a job's lock; the loader (redis-scripts.ts) puts it where a script says
-- `-- @include job-lock.include.lua`.

-- Whether a job's lock can be taken: it has no value, or one an operator force-released ('unlocked|…', kept
-- until the old lock would have expired so that its holder learns it lost it).
local function lockIsFree(lockKey)
  local holder = redis.call('GET', lockKey)
  return not holder or string.sub(holder, 1, 9) == 'unlocked|'
end

-- Whether an operator has paused the job.
local function isPaused(pausedKey)
  return redis.call('EXISTS', pausedKey) == 1
end

-- Why an occurrence script may not take the job's lock now: {0} a run holds it, {-2} the job is paused; nil
-- when it may.
local function occurrenceRefusal(lockKey, pausedKey)
  if not lockIsFree(lockKey) then
    return {0}
  end
  if isPaused(pausedKey) then
    return {-2}
  end
end
