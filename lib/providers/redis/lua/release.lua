-- Releases a lock if the caller still owns it: deletes it, or keeps it `keepFor` ms more (lockAtLeastFor).
-- Every plain lock's release: nothing else is defined or looked at (release-recording.lua records a run too).
local lockKey = KEYS[1]
local owner = ARGV[1]
local keepFor = ARGV[2]    -- ms to keep; '0' or absent deletes
-- Returns HELD released, EXPIRED the lock had expired, NOT_OWNER another owner holds it (owner-checks.ts).
-- @include release-owned.include.lua

return releaseOwned(lockKey, owner, keepFor)
