-- An operator's force-release of a job's lock, whoever holds it. The lock's value becomes 'unlocked|<actor>'
-- until the old lock would have expired: the holder's next renewal or release finds another owner and aborts
-- its run (not-owner), while the job's next run takes the lock at once. Recorded in the job's history.
local lockKey = KEYS[1]
local historyKey = KEYS[2]
local entry = ARGV[1]  -- the steering entry (JSON)
local historyLimit = tonumber(ARGV[2])
local marker = ARGV[3] -- 'unlocked|<actor>'
-- Returns the former holder's value, or false when the lock was free (or unlocked already): then nothing is
-- written, not even to the history, as there was nothing to release.
local holder = redis.call('GET', lockKey)
if not holder or string.sub(holder, 1, 9) == 'unlocked|' then
  return false
end
redis.call('SET', lockKey, marker, 'PX', math.max(redis.call('PTTL', lockKey), 1))
-- The entry names who held the lock: the lockedBy part of its value, '<lockedBy>|<epoch ms>|<id>'.
entry = string.sub(entry, 1, -2) .. ',"formerHolder":' .. cjson.encode(string.match(holder, '^[^|]*')) .. '}'
redis.call('LPUSH', historyKey, entry)
redis.call('LTRIM', historyKey, 0, historyLimit - 1)
return holder
