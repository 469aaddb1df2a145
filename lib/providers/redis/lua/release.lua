-- Releases a lock if the caller still owns it: deletes it, or keeps it `keepFor` ms more (lockAtLeastFor).
-- With a job record whose run is the caller's, records how the run ended, in the same step.
local lockKey = KEYS[1]
local recordKey = KEYS[2]  -- optional: the job record hash
local owner = ARGV[1]
local keepFor = ARGV[2]    -- ms to keep; '0' or absent deletes
local outcome = ARGV[3]    -- 'succeeded' | 'failed', with recordKey
-- Returns HELD released, EXPIRED the lock had expired, NOT_OWNER another owner holds it (owner-checks.ts).
-- @include run-end.include.lua

if recordKey then
  recordOutcome(recordKey, owner, outcome)
end
return releaseOwned(lockKey, owner, keepFor)
