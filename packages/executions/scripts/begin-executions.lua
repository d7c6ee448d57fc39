--[[
  Starts executions of one organization, or joins the ones that exist, in one atomic step: coalescing,
  the organization's limit on the lane, the records, the callers waiting and the batches counting on
  them. Every key is below the organization's prefix, in one slot of a Redis Cluster, and named by the
  functions of `KEY` (generated from packages/jobs/src/redis-keys.ts).

  KEYS[1]  the organization's key prefix (organizationPrefix, packages/jobs/src/redis-keys.ts)
  ARGV[1]  now (ms)
  ARGV[2]  lane: 'interactive' | 'batch'
  ARGV[3]  the organization's limit on the lane (executions in it at once); 0: none
  ARGV[4]  over the limit: 'refuse' (change nothing) or 'behind' (admit anyway; the caller enqueues behind);
           'reserved': admitted beforehand under their candidate ids (accept-batch.lua), whose places a
           request that joins another execution gives back
  ARGV[5]  deadline (ms): when the new executions stop counting in the lane, and their coalescing key's
           reuse window starts at the latest
  ARGV[6]  a new record's TTL until it finishes (ms)
  ARGV[7]  how long a finished record is kept (ms)
  ARGV[8]  how long a completed result serves identical requests (ms); 0: not at all
  ARGV[9]  the reply channel of the API instance that waits, or ''
  ARGV[10] the batch the requests are items of, or ''
  ARGV[11] the queue of executions admitted over the limit ('behind'), or ''
  ARGV[12…] five per request: candidate execution id, coalescing fingerprint or '', queue, batch index or '',
           the teams it runs for (a JSON array; '' for none given), kept in its record for who may read it

  Returns {CODE.overLimit, in flight, finished within the pace window, ms until the earliest in flight
  expires} when over a 'refuse' limit (nothing changed); else {behind ('1' when admitted over the limit),
  then per request: execution id, state ('created' | 'pending' | 'completed' | 'failed'), reply or ''}.
]]
--- @include "organization-pace"

local prefix = KEYS[1]
local now = tonumber(ARGV[1])
local lane = KEY.lane(prefix, ARGV[2])
local limit = tonumber(ARGV[3])
local deadline = tonumber(ARGV[5])
local ttl = tonumber(ARGV[6])
local retain = tonumber(ARGV[7])
local reuse = tonumber(ARGV[8])
local channel = ARGV[9]
local batch = ARGV[10]

-- Pass 1, reading only: which execution each request goes to.
local requests = {}
local fresh = {}
local freshByPrint = {}
local created = 0
for i = 12, #ARGV, 5 do
  local id, print, queue, index, teams = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if print ~= '' then
    local other = freshByPrint[print] or redis.call('GET', KEY.coalesce(prefix, print))
    -- A key whose record expired names nothing to join.
    if other and (fresh[other] or redis.call('EXISTS', KEY.execution(prefix, other)) == 1) then id = other end
  end
  local state, reply = 'created', ''
  if fresh[id] then
    state = 'pending'
  else
    local found = redis.call('HMGET', KEY.execution(prefix, id), 'status', 'result')
    if found[1] then
      state, reply = found[1], found[2] or ''
    else
      fresh[id] = true
      created = created + 1
      if print ~= '' then freshByPrint[print] = id end
    end
  end
  requests[#requests + 1] = {id = id, candidate = ARGV[i], print = print, queue = queue, index = index, teams = teams, state = state, reply = reply}
end

-- Pass 2: the organization's limit, all or nothing.
local behind = '0'
local reserved = ARGV[4] == 'reserved'
if limit > 0 and not reserved then
  redis.call('ZREMRANGEBYSCORE', lane, '-inf', now)
  local inFlight = redis.call('ZCARD', lane)
  local adding = created
  if adding > 0 and inFlight + adding > limit then
    if ARGV[4] == 'refuse' then
      return overLimit(KEY.finished(prefix), lane, now, inFlight)
    end
    behind = '1'
  end
end

-- Pass 3: the writes.
local batchKey, countedKey
if batch ~= '' then batchKey, countedKey = KEY.batch(prefix, batch), KEY.batchCounted(prefix, batch) end
local answer = {behind}
local laneExpiry = 0
for _, r in ipairs(requests) do
  local key = KEY.execution(prefix, r.id)
  if r.state == 'created' then
    local queue = r.queue
    if behind == '1' and ARGV[11] ~= '' then queue = ARGV[11] end
    redis.call('HSET', key, 'status', 'pending', 'createdAt', now, 'queue', queue, 'coalesce', r.print,
      'reuseMs', reuse, 'retainMs', retain)
    if r.teams ~= '' then redis.call('HSET', key, 'teams', r.teams) end
    redis.call('PEXPIRE', key, ttl)
    if r.print ~= '' then
      redis.call('SET', KEY.coalesce(prefix, r.print), r.id, 'PX', math.max(1, deadline - now + reuse))
    end
    if limit > 0 then
      redis.call('ZADD', lane, deadline, r.id)
      laneExpiry = deadline
    end
  end
  if reserved and r.id ~= r.candidate then redis.call('ZREM', lane, r.candidate) end
  local pending = r.state == 'created' or r.state == 'pending'
  if pending and channel ~= '' then
    local waiters = KEY.executionWaiters(prefix, r.id)
    redis.call('SADD', waiters, channel)
    redis.call('PEXPIRE', waiters, ttl)
  end
  if batch ~= '' then
    if pending then
      local batches = KEY.executionBatches(prefix, r.id)
      redis.call('SADD', batches, batch .. ' ' .. r.index)
      redis.call('PEXPIRE', batches, ttl)
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
