--[[
  Records a chunk of an async batch's items as begun (start-batch): appends their entries to the batch's
  item list in input order, only where the list ends (a retried chunk is not appended twice), and counts
  the invalid ones as done and failed.

  KEYS[1] the batch (batchKey, packages/jobs/src/redis-keys.ts)
  KEYS[2] its items (batchItemsKey)
  KEYS[3] its items counted as done (batchCountedKey)
  ARGV[1] the index of the chunk's first item
  ARGV[2] now (ms)
  ARGV[3] TTL of the batch (ms)
  ARGV[4…] the entries: an execution id, or an invalid input's `{ error }` JSON

  Returns how many items the batch has begun, or CODE.recordedAlready.
]]
local batchKey, items, counted = KEYS[1], KEYS[2], KEYS[3]
local from = tonumber(ARGV[1])
if tonumber(redis.call('HGET', batchKey, 'begun') or '0') ~= from then return CODE.recordedAlready end
local invalid = 0
for i = 4, #ARGV do
  if string.sub(ARGV[i], 1, 1) == '{' and redis.call('SADD', counted, from + i - 4) == 1 then invalid = invalid + 1 end
end
for i = 4, #ARGV, 1000 do
  redis.call('RPUSH', items, unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if invalid > 0 then
  redis.call('HINCRBY', batchKey, 'done', invalid)
  redis.call('HINCRBY', batchKey, 'failed', invalid)
  redis.call('HSET', batchKey, 'lastDoneAt', ARGV[2])
end
for _, key in ipairs({items, counted}) do redis.call('PEXPIRE', key, ARGV[3]) end
return redis.call('HINCRBY', batchKey, 'begun', #ARGV - 3)
