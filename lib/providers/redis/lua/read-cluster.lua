-- The health watch's read, on one Redis server: KEYS[1] the nodes, KEYS[2] the catalogue (hashes), then four keys
-- per job (its lock, fence, pause and history), ARGV[1] the number of history entries to read. Writes nothing.
-- Returns {the nodes' hash, the catalogue's hash (each as HGETALL returns it), per job what readLock returns}.
-- @include read-lock.include.lua
local limit = tonumber(ARGV[1])
local reads = {}
for first = 3, #KEYS, 4 do
  reads[#reads + 1] = readLock(KEYS[first], KEYS[first + 1], KEYS[first + 2], KEYS[first + 3], limit)
end
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), reads}
