-- Releases a lock if the caller still owns it, as release.lua does, and records how the run ended in its job
-- record if the run is the caller's, in the same step.
local lockKey = KEYS[1]
local recordKey = KEYS[2]  -- the job record hash
local owner = ARGV[1]
local keepFor = ARGV[2]    -- ms to keep; '0' deletes
local outcome = ARGV[3]    -- 'succeeded' | 'failed'
-- Returns 1 released, 0 the lock had expired, -1 another owner holds it.
-- @include record-outcome.include.lua
-- @include release-owned.include.lua

recordOutcome(recordKey, owner, outcome)
return releaseOwned(lockKey, owner, keepFor)
