-- Reads the locks of many jobs at once, for the health watch: per job four keys (its lock, fence, pause and
-- history, as redis-keys.ts lays them out), and ARGV[1] the number of history entries to read. Writes nothing.
-- Returns per job {lock value or false, its PTTL, fence or false, pause or false, newest history entries}.
local limit = tonumber(ARGV[1])
local readings = {}
for first = 1, #KEYS, 4 do
  readings[#readings + 1] = {
    redis.call('GET', KEYS[first]),
    redis.call('PTTL', KEYS[first]),
    redis.call('GET', KEYS[first + 1]),
    redis.call('GET', KEYS[first + 2]),
    limit > 0 and redis.call('LRANGE', KEYS[first + 3], 0, limit - 1) or {},
  }
end
return readings
