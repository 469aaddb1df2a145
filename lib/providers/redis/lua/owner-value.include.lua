-- A lock's value, as lib/core/provider/owner-value.ts writes it: a held lock's owner value,
-- 'owner:<epoch ms>:<unique id>:<node>', or an operator's force-release marker, 'force-unlocked:…'. A plain
-- lock's value puts its token first, 'fenced:<s>:<µs>:<owner value>' (acquire.lua). The loader (lua-script.ts)
-- puts this where a script says `-- @include owner-value.include.lua`.

-- Whether a lock's value is a force-release marker (the lock is free): told by its tag, never by node.
local function forceUnlocked(value)
  return string.sub(value, 1, 15) == 'force-unlocked:'
end

-- The node an owner value names, as given: all after its three fixed fields (the caller's owner, for an
-- 'owned:<epoch ms>:<owner>' value).
local function ownerLockedBy(value)
  value = string.match(value, '^fenced:%d+:%d+:(.*)$') or value
  return string.match(value, '^owner:%d+:[^:]*:(.*)$') or string.match(value, '^owned:%d+:(.*)$')
end

-- Whether a lock's value was written for the caller's `owner` ('owned:<epoch ms>:<owner>', the owner as given,
-- which only a plain lock has: behind its token).
local function heldFor(value, owner)
  return string.match(value, '^fenced:%d+:%d+:owned:%d+:(.*)$') == owner
end

-- The owner checks' named replies (HELD, EXPIRED, NOT_OWNER): LuaScript (lua-script.ts) defines them here from
-- owner-checks.ts; ownerOutcome (redis-scripts.ts) decodes.
-- @owner-checks

-- What a call by the caller's `owner` answers when `holder` (the lock's value, or false) is not its lock:
-- EXPIRED (the lock expired or was released) or NOT_OWNER (another owner holds it). nil when the caller holds it.
local function notHeldFor(holder, owner)
  if not holder then
    return EXPIRED
  end
  if not heldFor(holder, owner) then
    return NOT_OWNER
  end
  return nil
end
