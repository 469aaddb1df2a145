-- Takes the locks of one or more scheduled jobs, each for one run, in one step: a job's lock is refused while
-- an operator has paused the job (unless the run is one the operator asked for), or while another run holds
-- it. A lock an operator force-released (its marker kept until the old lock would have expired, so
-- its holder learns it lost it) counts as free. Jobs of a node that fall due together are taken in one call.
-- Per job i (0-based), KEYS[3i+1..3i+3] and ARGV[3i+1..3i+3]:
--   lock, fencing counter, pause marker;
--   owner value, TTL in ms, manual ('1': an operator's "run now", which runs even while paused).
-- Returns, per job: the fencing token, LOCKED when the lock is held, PAUSED when the job is paused.
-- @include owner-value.include.lua
-- @include job-lock.include.lua
-- @include fence.include.lua

local function acquire(lockKey, fenceKey, pausedKey, owner, ttl, manual)
  local refusal = jobLockRefusal(lockKey, pausedKey, manual)
  if refusal then
    return refusal
  end
  redis.call('SET', lockKey, owner, 'PX', ttl)
  return drawFence(fenceKey)
end

local replies = {}
for i = 0, #KEYS / 3 - 1 do
  local k = 3 * i
  replies[i + 1] = acquire(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], ARGV[k + 1], ARGV[k + 2], ARGV[k + 3] == '1')
end
return replies
