-- Reads one job's lock for operators: KEYS its lock, fence, pause and history (one Cluster slot), ARGV[1] the
-- number of history entries to read. Returns what readLock returns.
-- @include read-lock.include.lua
return readLock(KEYS[1], KEYS[2], KEYS[3], KEYS[4], tonumber(ARGV[1]))
