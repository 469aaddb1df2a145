-- Releases a lock if the caller still owns it: deletes it, or keeps it ARGV[2] ms more (lockAtLeastFor).
-- KEYS[1] lock hash   ARGV[1] owner token   ARGV[2] ms to keep (0 deletes)
-- Returns 1 released, 0 the lock had expired, -1 another owner holds it.
local owner = redis.call('HGET', KEYS[1], 'token')
if not owner then
  return 0
end
if owner ~= ARGV[1] then
  return -1
end
if tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
return 1
