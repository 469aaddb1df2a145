-- One job's lock as operators read it, from its keys as redis-keys.ts lays them out: its value or false, its
-- PTTL, its fence or false, its pause or false, its newest `limit` history entries. Writes nothing. The loader
-- (lua-script.ts) puts this where a script says `-- @include read-lock.include.lua`.
local function readLock(lock, fence, paused, history, limit)
  return {
    redis.call('GET', lock),
    redis.call('PTTL', lock),
    redis.call('GET', fence),
    redis.call('GET', paused),
    limit > 0 and redis.call('LRANGE', history, 0, limit - 1) or {},
  }
end
