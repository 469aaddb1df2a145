-- Renews many leases in one round trip, each only if the caller still owns it (one key: extend).
-- KEYS[i]: a lock;   ARGV[2i-1]: its owner value;   ARGV[2i]: its new TTL in ms.
-- Returns, per key: HELD renewed, EXPIRED the lock had expired, NOT_OWNER another owner holds it (owner-checks.ts,
-- put in by lua-script.ts).
-- @owner-checks
local outcomes = {}
for i, lockKey in ipairs(KEYS) do
  local holder = redis.call('GET', lockKey)
  if not holder then
    outcomes[i] = EXPIRED
  elseif holder ~= ARGV[2 * i - 1] then
    outcomes[i] = NOT_OWNER
  else
    redis.call('PEXPIRE', lockKey, ARGV[2 * i])
    outcomes[i] = HELD
  end
end
return outcomes
