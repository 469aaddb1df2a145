-- Shared by the scripts that release a lock (release.lua, release-recording.lua, finish.lua); the loader
-- (lua-script.ts) puts it where a script says `-- @include release-owned.include.lua`.

-- The owner checks' named replies (HELD, EXPIRED, NOT_OWNER): LuaScript (lua-script.ts) defines them here from
-- owner-checks.ts; ownerOutcome (redis-scripts.ts) decodes.
-- @owner-checks

-- Deletes the lock if `owner` holds it, or keeps it `keepFor` ms more (lockAtLeastFor; '0' or nil deletes).
-- Returns HELD released, EXPIRED the lock had expired, NOT_OWNER another owner holds it.
local function releaseOwned(lockKey, owner, keepFor)
  local holder = redis.call('GET', lockKey)
  if holder ~= owner then
    return holder and NOT_OWNER or EXPIRED -- holder is false once the lock has expired
  end
  if not keepFor or keepFor == '0' then
    redis.call('DEL', lockKey)
  else
    redis.call('PEXPIRE', lockKey, keepFor)
  end
  return HELD
end
