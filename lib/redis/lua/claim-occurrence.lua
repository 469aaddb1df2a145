-- Takes a free lock for one scheduled occurrence of a job, unless that occurrence (or a later one) was
-- already claimed by any node, and records the run in the job record, in one step.
-- KEYS[1] lock   KEYS[2] fencing counter   KEYS[3] job record hash (no TTL)
-- ARGV[1] owner value   ARGV[2] TTL in ms   ARGV[3] lockedBy   ARGV[4] occurrence (epoch ms)
-- Returns {fence}, {0} when the lock is held, or {-1, state} when the occurrence was already claimed
-- (state: the record's state if it is that very occurrence, else '').
local last = tonumber(redis.call('HGET', KEYS[3], 'occurrence'))
if last and last >= tonumber(ARGV[4]) then
  return {-1, last == tonumber(ARGV[4]) and redis.call('HGET', KEYS[3], 'state') or ''}
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {0}
end
local fence = redis.call('INCR', KEYS[2])
local time = redis.call('TIME')
redis.call('HSET', KEYS[3], 'occurrence', ARGV[4], 'state', 'running', 'token', ARGV[1], 'runBy', ARGV[3],
  'startedAt', time[1] * 1000 + math.floor(time[2] / 1000), 'finishedAt', '', 'attempt', 1, 'previousHolder', '', 'orphanedAt', '')
return {fence}
