-- Moves a lock's expiry if the caller still owns it.
-- KEYS[1] lock   ARGV[1] owner value   ARGV[2] new TTL in ms
-- Returns 1 extended, 0 the lock had expired, -1 another owner holds it.
local owner = redis.call('GET', KEYS[1])
if not owner then
  return 0
end
if owner ~= ARGV[1] then
  return -1
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
