--[[
  Finishes an execution: stores its reply, releases its coalescing key, takes it out of its
  organization's lanes, counts it in the batches waiting on it, and publishes the reply to every API
  instance waiting for it, in one atomic step. The first reply wins: a late failure notice or a
  re-run's reply never replaces it. A finished error is never joinable: its coalescing key goes in the
  same step that publishes it, so a caller retrying on the answer starts afresh.

  KEYS[1] the execution's record (executionKey, packages/jobs/src/redis-keys.ts)
  KEYS[2] the reply channels waiting for it (executionWaitersKey)
  KEYS[3] the batch items counting on it (executionBatchesKey)
  KEYS[4] the organization's interactive lane, KEYS[5] its batch lane (laneKey)
  KEYS[6] the organization's executions finished recently (finishedKey)
  KEYS[7] the coalescing key of ARGV[6] (coalesceKey), when ARGV[6] is not ''
  KEYS[…] two per batch of ARGV[7…], in that order: the batch (batchKey) and its items counted (batchCountedKey)
  ARGV[1] execution id
  ARGV[2] reply (as encoded by encodeReply)
  ARGV[3] status: 'completed' | 'failed'
  ARGV[4] now (ms)
  ARGV[5] '1' when a completed result may serve identical requests for the reuse window
  ARGV[6] the fingerprint in the record (its `coalesce` field), or ''
  ARGV[7…] the batches counting on it (the batch ids of KEYS[3]'s members)

  Returns CODE.finishedAlready when the execution had finished already (or has no record),
  CODE.needsKeys when the record's fingerprint or batches are not the ones given (nothing changed),
  else the number of API instances that received the reply.
]]
local record, waiters, batches, interactive, batchLane, finished = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id = ARGV[1]
local now = tonumber(ARGV[4])
local print = ARGV[6]
local coalesce
local nextKey = 7
if print ~= '' then coalesce, nextKey = KEYS[7], 8 end
-- Each batch's keys, by its id.
local batchKeys = {}
for i = 7, #ARGV do
  local k = nextKey + 2 * (i - 7)
  batchKeys[ARGV[i]] = {batch = KEYS[k], counted = KEYS[k + 1]}
end

local found = redis.call('HMGET', record, 'status', 'coalesce', 'reuseMs', 'retainMs')
local members = {}
if found[1] == 'pending' then
  if (found[2] or '') ~= print then return CODE.needsKeys end
  members = redis.call('SMEMBERS', batches)
  for _, member in ipairs(members) do
    if not batchKeys[string.sub(member, 1, string.find(member, ' ', 1, true) - 1)] then return CODE.needsKeys end
  end
end

-- Finished or not, it no longer counts against the organization's limit.
redis.call('ZREM', interactive, id)
redis.call('ZREM', batchLane, id)
if found[1] ~= 'pending' then return CODE.finishedAlready end

redis.call('HSET', record, 'status', ARGV[3], 'completedAt', now, 'result', ARGV[2])
redis.call('PEXPIRE', record, found[4])

if coalesce and redis.call('GET', coalesce) == id then
  local reuse = tonumber(found[3]) or 0
  if ARGV[5] == '1' and reuse > 0 then redis.call('PEXPIRE', coalesce, reuse) else redis.call('DEL', coalesce) end
end

redis.call('ZADD', finished, now, id)
redis.call('ZREMRANGEBYSCORE', finished, '-inf', now - PACE_WINDOW_MS)
redis.call('PEXPIRE', finished, PACE_WINDOW_MS)

-- Each batch item counts once, whichever of a join or a finish sees it done first.
for _, member in ipairs(members) do
  local space = string.find(member, ' ', 1, true)
  local batch = batchKeys[string.sub(member, 1, space - 1)]
  if redis.call('SADD', batch.counted, string.sub(member, space + 1)) == 1 then
    redis.call('HINCRBY', batch.batch, 'done', 1)
    if ARGV[3] == 'failed' then redis.call('HINCRBY', batch.batch, 'failed', 1) end
    redis.call('HSET', batch.batch, 'lastDoneAt', now)
  end
  for _, batchPart in ipairs({batch.batch, batch.counted}) do
    if redis.call('PTTL', batchPart) == -1 then redis.call('PEXPIRE', batchPart, found[4]) end
  end
end
redis.call('DEL', batches)

local receivers = 0
for _, channel in ipairs(redis.call('SMEMBERS', waiters)) do
  receivers = receivers + redis.call('PUBLISH', channel, ARGV[2])
end
redis.call('DEL', waiters)
return receivers
