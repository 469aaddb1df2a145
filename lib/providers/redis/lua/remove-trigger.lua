-- Removes a pending trigger, by id: a node takes it to run it, or its operator withdraws it after no node took it
-- in time. Whoever removes it first has it; the other learns it is gone, so a trigger its operator was told
-- will not run cannot run, and a node never removes a newer request than the one it read.
local triggersKey = KEYS[1]
local jobName = ARGV[1]
local id = ARGV[2]
-- Returns 1 when removed, 0 when it is no longer pending (taken or withdrawn already, or replaced).
local pending = redis.call('HGET', triggersKey, jobName)
if pending and cjson.decode(pending).id == id then return redis.call('HDEL', triggersKey, jobName) end
return 0
