-- Renews many leases in one round trip, each only if the caller still owns it (one key: extend).
-- KEYS[i]: a lock;   ARGV[2i-1]: its owner value;   ARGV[2i]: its new TTL in ms.
-- Returns, per key: 1 renewed, 0 the lock had expired, -1 another owner holds it.
local outcomes = {}
for i, lockKey in ipairs(KEYS) do
  local holder = redis.call('GET', lockKey)
  if not holder then
    outcomes[i] = 0
  elseif holder ~= ARGV[2 * i - 1] then
    outcomes[i] = -1
  else
    redis.call('PEXPIRE', lockKey, ARGV[2 * i])
    outcomes[i] = 1
  end
end
return outcomes
