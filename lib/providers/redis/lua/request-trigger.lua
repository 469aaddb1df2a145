-- An operator's trigger of a job: queued unless one is pending for the job already, so that concurrent triggers
-- of one job give one run (a second request would only overwrite the first, and no node would ever answer it).
local triggersKey = KEYS[1]
local jobName = ARGV[1]
local request = ARGV[2] -- the request (JSON)
-- Returns the pending request (JSON) the new one yields to, or false when the new one is queued.
local pending = redis.call('HGET', triggersKey, jobName)
if pending then return pending end
redis.call('HSET', triggersKey, jobName, request)
return false
