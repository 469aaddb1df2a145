-- Releases a lock if the caller still owns it: deletes it, or keeps it `keepFor` ms more (lockAtLeastFor).
-- Every plain lock's release: nothing else is defined or looked at (release-recording.lua records a run too).
local lockKey = KEYS[1]
local owner = ARGV[1]
local keepFor = ARGV[2]    -- ms to keep; '0' or absent deletes
-- Returns 1 released, 0 the lock had expired, -1 another owner holds it.
-- @include release-owned.include.lua

return releaseOwned(lockKey, owner, keepFor)
