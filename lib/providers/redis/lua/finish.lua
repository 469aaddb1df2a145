-- Ends one or more scheduled jobs' runs, in one step: releases each run's lock if the run still owns it
-- (deletes it, or keeps it `keepFor` ms more for lockAtLeastFor), records how an occurrence's run ended in its
-- job record, and adds the run to its job's history ('lost' when the lock was no longer the run's). Runs of a
-- node that end together are finished in one call.
-- Per run i (0-based), KEYS[3i+1..3i+3] and ARGV[6i+1..6i+6]:
--   lock, job record hash, run history (a list, newest first);
--   owner value, ms to keep ('0' deletes), outcome ('succeeded' | 'failed'), the history entry as its node
--   wrote it, less its outcome (a JSON object without its closing brace), how many history entries to keep,
--   '1' for an occurrence's run (the others have no job record: not even looked at).
-- A job record is touched only if it records this very run (its token is the owner value). A history holds at
-- most historyLimit + 16 entries; readers read the newest historyLimit.
-- Returns, per run: HELD released, EXPIRED the lock had expired, NOT_OWNER another owner holds it.
local TRIM_SLACK = 16
-- @include record-outcome.include.lua
-- @include release-owned.include.lua

local function finish(lockKey, recordKey, historyKey, owner, keepFor, outcome, entryHead, historyLimit, recorded)
  if recorded then
    recordOutcome(recordKey, owner, outcome)
  end
  local check = releaseOwned(lockKey, owner, keepFor)
  -- Concatenated, not cjson: encoding the entry in Lua costs Redis more than the rest of the release.
  local length = redis.call('LPUSH', historyKey, entryHead .. ',"outcome":"' .. (check == HELD and outcome or 'lost') .. '"}')
  -- Trimmed in steps of TRIM_SLACK entries, not on every push: readers never look past historyLimit.
  if length > historyLimit + TRIM_SLACK then
    redis.call('LTRIM', historyKey, 0, historyLimit - 1)
  end
  return check
end

local replies = {}
for i = 0, #KEYS / 3 - 1 do
  local k, a = 3 * i, 6 * i
  replies[i + 1] = finish(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3],
    ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], tonumber(ARGV[a + 5]), ARGV[a + 6] == '1')
end
return replies
