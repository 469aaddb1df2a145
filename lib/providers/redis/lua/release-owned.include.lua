-- Shared by the scripts that release a lock (release.lua, release-recording.lua, finish.lua); the loader
-- (lua-script.ts) puts it where a script says `-- @include release-owned.include.lua`.

-- Deletes the lock if `owner` holds it, or keeps it `keepFor` ms more (lockAtLeastFor; '0' or nil deletes).
-- Returns 1 released, 0 the lock had expired, -1 another owner holds it.
local function releaseOwned(lockKey, owner, keepFor)
  local holder = redis.call('GET', lockKey)
  if holder ~= owner then
    return holder and -1 or 0 -- holder is false once the lock has expired
  end
  if not keepFor or keepFor == '0' then
    redis.call('DEL', lockKey)
  else
    redis.call('PEXPIRE', lockKey, keepFor)
  end
  return 1
end
