-- Releases a lock if the caller still owns it, as release.lua does, and records how the run ended in its job
-- record if the run is the caller's, in the same step.
local lockKey = KEYS[1]
local recordKey = KEYS[2]  -- the job record hash
local owner = ARGV[1]
local keepFor = ARGV[2]    -- ms to keep; '0' deletes
local outcome = ARGV[3]    -- 'succeeded' | 'failed'
-- Returns HELD released, EXPIRED the lock had expired, NOT_OWNER another owner holds it (owner-checks.ts).
-- @include record-outcome.include.lua
-- @include release-owned.include.lua

recordOutcome(recordKey, owner, outcome)
return releaseOwned(lockKey, owner, keepFor)
