--[[
  Records a chunk of an async batch's items as begun (start-batch): appends their entries to the batch's
  item list in input order, only where the list ends (a retried chunk is not appended twice), and counts
  the invalid ones as done and failed. Every key is below the organization's prefix, named by the
  functions of `KEY` (generated from packages/jobs/src/redis-keys.ts).

  KEYS[1] the organization's key prefix (organizationPrefix, packages/jobs/src/redis-keys.ts)
  ARGV[1] batch id
  ARGV[2] the index of the chunk's first item
  ARGV[3] now (ms)
  ARGV[4] TTL of the batch (ms)
  ARGV[5…] the entries: an execution id, or an invalid input's `{ error }` JSON

  Returns how many items the batch has begun, or CODE.recordedAlready.
]]
local prefix = KEYS[1]
local batchKey = KEY.batch(prefix, ARGV[1])
local items = KEY.batchItems(prefix, ARGV[1])
local counted = KEY.batchCounted(prefix, ARGV[1])
local from = tonumber(ARGV[2])
if tonumber(redis.call('HGET', batchKey, 'begun') or '0') ~= from then return CODE.recordedAlready end
local invalid = 0
for i = 5, #ARGV do
  if string.sub(ARGV[i], 1, 1) == '{' and redis.call('SADD', counted, from + i - 5) == 1 then invalid = invalid + 1 end
end
for i = 5, #ARGV, 1000 do
  redis.call('RPUSH', items, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if invalid > 0 then
  redis.call('HINCRBY', batchKey, 'done', invalid)
  redis.call('HINCRBY', batchKey, 'failed', invalid)
  redis.call('HSET', batchKey, 'lastDoneAt', ARGV[3])
end
for _, key in ipairs({items, counted}) do redis.call('PEXPIRE', key, ARGV[4]) end
return redis.call('HINCRBY', batchKey, 'begun', #ARGV - 4)
