--[[
  Stores an async batch once its items were submitted (begin-executions.lua): its size, deadline and
  items in input order. Its progress counters may already hold items that finished meanwhile
  (finish-execution.lua); the invalid inputs, refused at once, are done and failed from the start.

  KEYS[1] the organization's key prefix (execution-keys.ts)
  ARGV[1] batch id
  ARGV[2] createdAt (ms)
  ARGV[3] deadline (ms)
  ARGV[4] TTL of the batch (ms): its deadline and the retention after
  ARGV[5…] the items: an execution id, or an invalid input's `{ error }` JSON

  Returns 1 when stored, 0 when the batch existed (a retry of its start).
]]
local batchKey = KEYS[1] .. 'batch:' .. ARGV[1]
if redis.call('HEXISTS', batchKey, 'createdAt') == 1 then return 0 end
local items = batchKey .. ':items'
local counted = batchKey .. ':counted'
redis.call('DEL', items)
local invalid = 0
for i = 5, #ARGV do
  if string.sub(ARGV[i], 1, 1) == '{' and redis.call('SADD', counted, i - 5) == 1 then invalid = invalid + 1 end
end
for i = 5, #ARGV, 1000 do
  redis.call('RPUSH', items, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('HSET', batchKey, 'createdAt', ARGV[2], 'deadline', ARGV[3], 'total', #ARGV - 4)
redis.call('HINCRBY', batchKey, 'done', invalid)
redis.call('HINCRBY', batchKey, 'failed', invalid)
for _, key in ipairs({batchKey, items, counted}) do redis.call('PEXPIRE', key, ARGV[4]) end
return 1
