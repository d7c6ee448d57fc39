--[[
  Finishes an execution: stores its reply, releases its coalescing key, takes it out of its
  organization's lanes, counts it in the batches waiting on it, and publishes the reply to every API
  instance waiting for it, in one atomic step. The first reply wins: a late failure notice or a
  re-run's reply never replaces it. A finished error is never joinable: its coalescing key goes in the
  same step that publishes it, so a caller retrying on the answer starts afresh. Every key is below the
  organization's prefix, named by the functions of `KEY` (generated from packages/jobs/src/redis-keys.ts).

  KEYS[1] the organization's key prefix (organizationPrefix, packages/jobs/src/redis-keys.ts)
  ARGV[1] execution id
  ARGV[2] reply (as encoded by encodeReply)
  ARGV[3] status: 'completed' | 'failed'
  ARGV[4] now (ms)
  ARGV[5] '1' when a completed result may serve identical requests for the reuse window

  Returns CODE.finishedAlready when the execution had finished already (or has no record), else the
  number of API instances that received the reply.
]]
--- @include "organization-pace"

local prefix = KEYS[1]
local id = ARGV[1]
local now = tonumber(ARGV[4])
local key = KEY.execution(prefix, id)

-- Finished or not, it no longer counts against the organization's limit.
redis.call('ZREM', KEY.lane(prefix, 'interactive'), id)
redis.call('ZREM', KEY.lane(prefix, 'batch'), id)
local found = redis.call('HMGET', key, 'status', 'coalesce', 'reuseMs', 'retainMs')
if found[1] ~= 'pending' then return CODE.finishedAlready end

redis.call('HSET', key, 'status', ARGV[3], 'completedAt', now, 'result', ARGV[2])
redis.call('PEXPIRE', key, found[4])

local print = found[2]
if print and print ~= '' then
  local coalesce = KEY.coalesce(prefix, print)
  if redis.call('GET', coalesce) == id then
    local reuse = tonumber(found[3]) or 0
    if ARGV[5] == '1' and reuse > 0 then redis.call('PEXPIRE', coalesce, reuse) else redis.call('DEL', coalesce) end
  end
end

local finished = KEY.finished(prefix)
redis.call('ZADD', finished, now, id)
redis.call('ZREMRANGEBYSCORE', finished, '-inf', now - PACE_WINDOW_MS)
redis.call('PEXPIRE', finished, PACE_WINDOW_MS)

-- Each batch item counts once, whichever of a join or a finish sees it done first.
local batches = KEY.executionBatches(prefix, id)
for _, member in ipairs(redis.call('SMEMBERS', batches)) do
  local space = string.find(member, ' ', 1, true)
  local batchId = string.sub(member, 1, space - 1)
  local batchKey, counted = KEY.batch(prefix, batchId), KEY.batchCounted(prefix, batchId)
  if redis.call('SADD', counted, string.sub(member, space + 1)) == 1 then
    redis.call('HINCRBY', batchKey, 'done', 1)
    if ARGV[3] == 'failed' then redis.call('HINCRBY', batchKey, 'failed', 1) end
    redis.call('HSET', batchKey, 'lastDoneAt', now)
  end
  for _, batchPart in ipairs({batchKey, counted}) do
    if redis.call('PTTL', batchPart) == -1 then redis.call('PEXPIRE', batchPart, found[4]) end
  end
end
redis.call('DEL', batches)

local waiters = KEY.executionWaiters(prefix, id)
local receivers = 0
for _, channel in ipairs(redis.call('SMEMBERS', waiters)) do
  receivers = receivers + redis.call('PUBLISH', channel, ARGV[2])
end
redis.call('DEL', waiters)
return receivers
