-- An operator's force-release of a job's lock, whoever holds it. The lock's value becomes a marker
-- ('force-unlocked:<epoch ms>:<actor>') until the old lock would have expired: the holder's next renewal or
-- release finds another owner and aborts its run (not-owner), while the job's next run takes the lock at once.
-- Recorded in the job's history.
local lockKey = KEYS[1]
local historyKey = KEYS[2]
local entry = ARGV[1]  -- the operator entry (JSON)
local historyLimit = tonumber(ARGV[2])
local marker = ARGV[3] -- the force-release marker
-- Returns the former holder's value, or false when the lock was free (or unlocked already): then nothing is
-- written, not even to the history, as there was nothing to release.
-- @include owner-value.include.lua

local holder = redis.call('GET', lockKey)
if not holder or forceUnlocked(holder) then
  return false
end
redis.call('SET', lockKey, marker, 'PX', math.max(redis.call('PTTL', lockKey), 1))
-- The entry names who held the lock: the node its owner value names.
local former = ownerLockedBy(holder) or holder
entry = string.sub(entry, 1, -2) .. ',"formerNode":' .. cjson.encode(former) .. '}'
redis.call('LPUSH', historyKey, entry)
redis.call('LTRIM', historyKey, 0, historyLimit - 1)
return holder
