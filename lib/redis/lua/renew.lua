-- Renews many leases in one round trip, each only if the caller still owns it (one key: extend).
-- KEYS[i] lock   ARGV[2i-1] owner value   ARGV[2i] new TTL in ms
-- Returns, per key: 1 renewed, 0 the lock had expired, -1 another owner holds it.
local outcomes = {}
for i, key in ipairs(KEYS) do
  local owner = redis.call('GET', key)
  if not owner then
    outcomes[i] = 0
  elseif owner ~= ARGV[2 * i - 1] then
    outcomes[i] = -1
  else
    redis.call('PEXPIRE', key, ARGV[2 * i])
    outcomes[i] = 1
  end
end
return outcomes
