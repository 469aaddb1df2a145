-- A heartbeat's bid for the health turn: one node at a time reads the cluster's health. The turn key holds the
-- holder's node name and expires with its lease; the second key keeps the unhealthy jobs its last holder left.
local turnKey = KEYS[1]
local unhealthyKey = KEYS[2]
local node = ARGV[1]
local lease = ARGV[2]
local unhealthy = ARGV[3]
-- Returns, when this node holds the turn now, whether it took it (1) or kept it (0) and the unhealthy jobs the
-- turn keeps (JSON); nil when another node holds it.
-- A turn handed back holds '' until it lapses: free at once, with the commands the lock user has (no DEL).
local holder = redis.call('GET', turnKey)
if holder == '' then holder = false end
if holder and holder ~= node then return false end
-- A lease of 0 hands the turn back (a node that stops).
if lease == '0' then redis.call('SET', turnKey, '', 'PX', 1) else redis.call('SET', turnKey, node, 'PX', lease) end
-- A node that takes the turn keeps the former holder's unhealthy jobs; it writes its own from its next bid on.
if not holder then return { 1, redis.call('GET', unhealthyKey) or '{}' } end
redis.call('SET', unhealthyKey, unhealthy)
return { 0, unhealthy }
