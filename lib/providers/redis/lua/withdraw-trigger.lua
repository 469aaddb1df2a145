-- Withdraws a trigger no node has taken yet, so it cannot run after its operator was told it did not.
local triggersKey = KEYS[1]
local jobName = ARGV[1]
local id = ARGV[2]
-- Returns 1 when withdrawn, 0 when a node has taken it already (or it never was pending).
local pending = redis.call('HGET', triggersKey, jobName)
if pending and cjson.decode(pending).id == id then return redis.call('HDEL', triggersKey, jobName) end
return 0
