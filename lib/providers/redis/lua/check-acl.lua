-- Which of the commands the module sends the caller's ACL refuses, without running any of them.
-- ARGV: groups of <argument count> <command> <arguments…>. Returns the refused commands' names, or -1
-- on a server without redis.acl_check_cmd (before Redis 7.0), which cannot tell.
if not redis.acl_check_cmd then
  return -1
end
local refused = {}
local i = 1
while i <= #ARGV do
  local count = tonumber(ARGV[i])
  local command = {}
  for j = 1, count do
    command[j] = ARGV[i + j]
  end
  if not redis.acl_check_cmd(unpack(command)) then
    refused[#refused + 1] = command[1]
  end
  i = i + count + 1
end
return refused
