--[[
  Accepts an async batch: its record (size, deadline, progress counters) and its items' places in the
  organization's batch lane, all or none, before a worker begins them (start-batch). Admitting them here,
  by the ids their executions will have, keeps the organization's limit whole across API instances.
  Every key is below the organization's prefix, named by the functions of `KEY` (generated from
  packages/jobs/src/redis-keys.ts).

  KEYS[1] the organization's key prefix (organizationPrefix, packages/jobs/src/redis-keys.ts)
  ARGV[1] batch id
  ARGV[2] now (ms)
  ARGV[3] deadline (ms): when its items stop counting in the lane
  ARGV[4] TTL of the batch (ms): its deadline and the retention after
  ARGV[5] the items in all (valid and invalid)
  ARGV[6] the organization's limit on its batch lane; 0: none
  ARGV[7] how many valid items follow (N)
  ARGV[8] the teams the batch runs for (a JSON array; '' for none given), kept in its record for who may read it
  ARGV[9…8+N] the execution ids the valid items propose
  ARGV[9+N…] two per invalid item: its index and its `{ error }` JSON, done and failed from the start

  Returns {CODE.accepted}, {CODE.existed} when the batch existed (a retry), or {CODE.overLimit, in flight,
  finished within the pace window, ms until the earliest in flight expires} (nothing changed).
]]
--- @include "organization-pace"

local prefix = KEYS[1]
local batchKey = KEY.batch(prefix, ARGV[1])
if redis.call('HEXISTS', batchKey, 'createdAt') == 1 then return {CODE.existed} end
local now = tonumber(ARGV[2])
local lane = KEY.lane(prefix, 'batch')
local limit = tonumber(ARGV[6])
local adding = tonumber(ARGV[7])
local lastId = 8 + adding
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', lane, '-inf', now)
  local inFlight = redis.call('ZCARD', lane)
  if adding > 0 and inFlight + adding > limit then
    return overLimit(KEY.finished(prefix), lane, now, inFlight)
  end
  for i = 9, lastId, 1000 do
    local args = {}
    for j = i, math.min(i + 999, lastId) do
      args[#args + 1] = ARGV[3]
      args[#args + 1] = ARGV[j]
    end
    redis.call('ZADD', lane, unpack(args))
  end
  if adding > 0 then
    local last = redis.call('ZRANGE', lane, -1, -1, 'WITHSCORES')
    if last[2] then redis.call('PEXPIREAT', lane, math.ceil(tonumber(last[2]))) end
  end
end
local invalid = (#ARGV - lastId) / 2
redis.call('HSET', batchKey, 'createdAt', now, 'deadline', ARGV[3], 'total', ARGV[5], 'begun', 0)
if ARGV[8] ~= '' then redis.call('HSET', batchKey, 'teams', ARGV[8]) end
redis.call('HINCRBY', batchKey, 'done', invalid)
redis.call('HINCRBY', batchKey, 'failed', invalid)
redis.call('PEXPIRE', batchKey, ARGV[4])
if invalid > 0 then
  local invalidKey, countedKey = KEY.batchInvalid(prefix, ARGV[1]), KEY.batchCounted(prefix, ARGV[1])
  -- Readable before a worker records them in the item list (extend-batch.lua counts them no more).
  for i = lastId + 1, #ARGV, 1000 do
    redis.call('HSET', invalidKey, unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
  for i = lastId + 1, #ARGV, 2 do redis.call('SADD', countedKey, ARGV[i]) end
  redis.call('PEXPIRE', invalidKey, ARGV[4])
  redis.call('PEXPIRE', countedKey, ARGV[4])
end
return {CODE.accepted}
