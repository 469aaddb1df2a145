-- Takes a free lock and stamps it with the next fencing token, in one step. With a job record
-- (KEYS[3]), it claims one scheduled occurrence too: refused if that occurrence, or a later one, was
-- already claimed by any node.
-- KEYS[1] lock hash   KEYS[2] fencing counter (no TTL)   KEYS[3] optional job record hash (no TTL)
-- ARGV[1] owner token   ARGV[2] TTL in ms   ARGV[3] lockedBy   ARGV[4] occurrence (epoch ms, with KEYS[3])
-- Returns {fence}, {0} when the lock is held, or {-1, state} when the occurrence was already claimed
-- (state: the record's state if it is that very occurrence, else '').
local record = KEYS[3]
if record then
  local last = tonumber(redis.call('HGET', record, 'occurrence'))
  if last and last >= tonumber(ARGV[4]) then
    local state = last == tonumber(ARGV[4]) and redis.call('HGET', record, 'state') or ''
    return {-1, state}
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0}
end
local fence = redis.call('INCR', KEYS[2])
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
redis.call('HSET', KEYS[1], 'token', ARGV[1], 'lockedBy', ARGV[3], 'lockedAt', now, 'fence', fence)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if record then
  redis.call('HSET', record, 'occurrence', ARGV[4], 'state', 'running', 'token', ARGV[1], 'runBy', ARGV[3],
    'startedAt', now, 'finishedAt', '', 'attempt', 1, 'previousHolder', '')
end
return {fence}
