-- Adds the skips a node counted since its last heartbeat: one call, however many locks and reasons.
local skipsKey = KEYS[1]
-- ARGV: field (`<lock>|<reason>`), count, field, count, …
for i = 1, #ARGV, 2 do
  redis.call('HINCRBY', skipsKey, ARGV[i], ARGV[i + 1])
end
return 0
