--[[
  Starts executions of one organization, or joins the ones that exist, in one atomic step: coalescing,
  the organization's limit on the lane, the records, the callers waiting and the batches counting on
  them. Every key is the organization's, in one slot of a Redis Cluster.

  KEYS[1] the organization's lane the executions go to (laneKey, packages/jobs/src/redis-keys.ts)
  KEYS[2] the organization's executions finished recently (finishedKey)
  KEYS[3], KEYS[4] when ARGV[9] names a batch: the batch (batchKey) and its items counted (batchCountedKey)
  KEYS[…] three per execution of ARGV[12…], in that order: its record (executionKey), the reply channels
          waiting for it (executionWaitersKey) and the batch items counting on it (executionBatchesKey)
  KEYS[…] one per fingerprint of the requests, in ARGV's order: its coalescing key (coalesceKey)
  ARGV[1]  now (ms)
  ARGV[2]  the organization's limit on the lane (executions in it at once); 0: none
  ARGV[3]  over the limit: 'refuse' (change nothing) or 'behind' (admit anyway; the caller enqueues behind);
           'reserved': admitted beforehand under their candidate ids (accept-batch.lua), whose places a
           request that joins another execution gives back
  ARGV[4]  deadline (ms): when the new executions stop counting in the lane, and their coalescing key's
           reuse window starts at the latest
  ARGV[5]  a new record's TTL until it finishes (ms)
  ARGV[6]  how long a finished record is kept (ms)
  ARGV[7]  how long a completed result serves identical requests (ms); 0: not at all
  ARGV[8]  the reply channel of the API instance that waits, or ''
  ARGV[9]  the batch the requests are items of, or ''
  ARGV[10] the queue of executions admitted over the limit ('behind'), or ''
  ARGV[11] how many executions' keys are given (E): every request's candidate, and the executions it may join
  ARGV[12…11+E] their ids
  ARGV[12+E] how many fingerprints follow (F)
  ARGV[13+E…12+E+F] the requests' fingerprints
  ARGV[13+E+F…] four per request: candidate execution id, coalescing fingerprint or '', queue, batch index or ''

  Returns {CODE.needsKeys, execution id…} when requests would join executions whose keys were not given
  (nothing changed: call again with them); {CODE.overLimit, in flight, finished within the pace window,
  ms until the earliest in flight expires} when over a 'refuse' limit (nothing changed); else {behind
  ('1' when admitted over the limit), then per request: execution id, state ('created' | 'pending' |
  'completed' | 'failed'), reply or ''}.
]]
--- @include "organization-pace"

local lane, finished = KEYS[1], KEYS[2]
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local deadline = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local retain = tonumber(ARGV[6])
local reuse = tonumber(ARGV[7])
local channel = ARGV[8]
local batch = ARGV[9]

local batchKey, countedKey
local nextKey = 3
if batch ~= '' then batchKey, countedKey, nextKey = KEYS[3], KEYS[4], 5 end
-- Each execution's keys, by its id.
local keysOf = {}
local executions = tonumber(ARGV[11])
for i = 1, executions do
  local k = nextKey + 3 * (i - 1)
  keysOf[ARGV[11 + i]] = {record = KEYS[k], waiters = KEYS[k + 1], batches = KEYS[k + 2]}
end
nextKey = nextKey + 3 * executions
-- Each fingerprint's coalescing key.
local coalesceOf = {}
local printsAt = 12 + executions
local prints = tonumber(ARGV[printsAt])
for j = 1, prints do coalesceOf[ARGV[printsAt + j]] = KEYS[nextKey + j - 1] end

-- Pass 1, reading only: which execution each request goes to.
local requests = {}
local fresh = {}
local freshByPrint = {}
local missing = {CODE.needsKeys}
local created = 0
for i = printsAt + prints + 1, #ARGV, 4 do
  local id, print, queue, index = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if print ~= '' then
    local other = freshByPrint[print] or redis.call('GET', coalesceOf[print])
    if other and not keysOf[other] then
      missing[#missing + 1] = other
    -- A key whose record expired names nothing to join.
    elseif other and (fresh[other] or redis.call('EXISTS', keysOf[other].record) == 1) then
      id = other
    end
  end
  local state, reply = 'created', ''
  if fresh[id] then
    state = 'pending'
  else
    local found = redis.call('HMGET', keysOf[id].record, 'status', 'result')
    if found[1] then
      state, reply = found[1], found[2] or ''
    else
      fresh[id] = true
      created = created + 1
      if print ~= '' then freshByPrint[print] = id end
    end
  end
  requests[#requests + 1] = {id = id, candidate = ARGV[i], print = print, queue = queue, index = index, state = state, reply = reply}
end
if #missing > 1 then return missing end

-- Pass 2: the organization's limit, all or nothing.
local behind = '0'
local reserved = ARGV[3] == 'reserved'
if limit > 0 and not reserved then
  redis.call('ZREMRANGEBYSCORE', lane, '-inf', now)
  local inFlight = redis.call('ZCARD', lane)
  local adding = created
  if adding > 0 and inFlight + adding > limit then
    if ARGV[3] == 'refuse' then
      return overLimit(finished, lane, now, inFlight)
    end
    behind = '1'
  end
end

-- Pass 3: the writes.
local answer = {behind}
local laneExpiry = 0
for _, r in ipairs(requests) do
  local own = keysOf[r.id]
  if r.state == 'created' then
    local queue = r.queue
    if behind == '1' and ARGV[10] ~= '' then queue = ARGV[10] end
    redis.call('HSET', own.record, 'status', 'pending', 'createdAt', now, 'queue', queue, 'coalesce', r.print,
      'reuseMs', reuse, 'retainMs', retain)
    redis.call('PEXPIRE', own.record, ttl)
    if r.print ~= '' then
      redis.call('SET', coalesceOf[r.print], r.id, 'PX', math.max(1, deadline - now + reuse))
    end
    if limit > 0 then
      redis.call('ZADD', lane, deadline, r.id)
      laneExpiry = deadline
    end
  end
  if reserved and r.id ~= r.candidate then redis.call('ZREM', lane, r.candidate) end
  local pending = r.state == 'created' or r.state == 'pending'
  if pending and channel ~= '' then
    redis.call('SADD', own.waiters, channel)
    redis.call('PEXPIRE', own.waiters, ttl)
  end
  if batch ~= '' then
    if pending then
      redis.call('SADD', own.batches, batch .. ' ' .. r.index)
      redis.call('PEXPIRE', own.batches, ttl)
    else
      -- Joined one that had finished: the item is done now, and counted once (see finish-execution.lua).
      if redis.call('SADD', countedKey, r.index) == 1 then
        redis.call('HINCRBY', batchKey, 'done', 1)
        if r.state == 'failed' then redis.call('HINCRBY', batchKey, 'failed', 1) end
        redis.call('HSET', batchKey, 'lastDoneAt', now)
      end
    end
  end
  answer[#answer + 1] = r.id
  answer[#answer + 1] = r.state
  answer[#answer + 1] = r.reply
end
if laneExpiry > 0 then
  local last = redis.call('ZRANGE', lane, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIREAT', lane, math.ceil(tonumber(last[2]))) end
end
if batch ~= '' then
  for _, key in ipairs({batchKey, countedKey}) do
    if redis.call('PTTL', key) == -1 then redis.call('PEXPIRE', key, ttl) end
  end
end
return answer
