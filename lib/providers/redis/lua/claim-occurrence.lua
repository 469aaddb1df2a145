-- Takes a free lock for one scheduled occurrence of each of one or more jobs, unless that occurrence (or a
-- later one) was already claimed by any node, and records the run in the job record, in one step. A node
-- whose jobs fall due in the same second claims them all in one call (on a single node or Sentinel; one call
-- per job on a Cluster, where a script cannot reach keys of several slots).
-- Per job i (0-based), KEYS[4i+1..4i+4] and ARGV[4i+1..4i+4]:
--   lock, fencing counter, job record hash (no TTL), pause marker;
--   owner value, TTL in ms, node, occurrence (epoch ms).
-- Returns, per job: {fence}, {LOCKED} when the lock is held, {ALREADY_RAN, state} when the occurrence was already
-- claimed (state: the record's state if it is that very occurrence, else ''), or {PAUSED} while paused.
-- A lock an operator force-released counts as free.
-- @include owner-value.include.lua
-- @include job-lock.include.lua
-- @include fence.include.lua

local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)

local function claim(lockKey, fenceKey, recordKey, pausedKey, owner, ttl, node, occurrence)
  -- One read for the skip of every node but the claimer: the occurrence recorded, and how its run stands.
  local record = redis.call('HMGET', recordKey, 'occurrence', 'state')
  local last = tonumber(record[1])
  if last and last >= occurrence then
    return {ALREADY_RAN, last == occurrence and record[2] or ''}
  end
  local refusal = occurrenceRefusal(lockKey, pausedKey)
  if refusal then
    return refusal
  end
  redis.call('SET', lockKey, owner, 'PX', ttl)
  local fence = drawFence(fenceKey)
  redis.call('HSET', recordKey, 'occurrence', occurrence, 'state', 'running', 'token', owner, 'node', node,
    'startedAt', now, 'finishedAt', '', 'attempt', 1, 'previousNode', '', 'orphanedAt', '')
  return {fence}
end

local replies = {}
for i = 0, #KEYS / 4 - 1 do
  local k, a = 4 * i, 4 * i
  replies[i + 1] = claim(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4],
    ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], tonumber(ARGV[a + 4]))
end
return replies
