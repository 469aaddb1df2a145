-- Reads the locks of jobs for operators: KEYS four per job (its lock, fence, pause and history; one Cluster slot
-- for them all), ARGV[1] the number of history entries to read. Returns per job what readLock returns.
-- @include read-lock.include.lua
local limit = tonumber(ARGV[1])
local reads = {}
for first = 1, #KEYS, 4 do
  reads[#reads + 1] = readLock(KEYS[first], KEYS[first + 1], KEYS[first + 2], KEYS[first + 3], limit)
end
return reads
