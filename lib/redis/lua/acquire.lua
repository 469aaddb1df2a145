-- Takes a free lock and draws its fencing token, in one step.
-- KEYS[1] lock (a string: its owner's value)   KEYS[2] fencing counter (no TTL, outlives the lock)
-- ARGV[1] owner value ('<lockedBy>|<epoch ms>|<unique id>')   ARGV[2] TTL in ms
-- Returns the fencing token, or 0 when the lock is held.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
