--[[
  Records an answer on an execution's verdict: appends it to the execution's feedback (its last entry
  is the current answer, the others its history) and indexes the execution by the answer's time, in one
  atomic step. Feedback lives as long as what it is about: the execution's record or its evidence bundle,
  whichever lives longer. Every key is below the organization's prefix (one hash slot on a cluster),
  built by packages/jobs/src/redis-keys.ts.

  KEYS[1] the execution's record (executionKey)
  KEYS[2] the execution's evidence bundle (evidenceKey)
  KEYS[3] the execution's feedback (feedbackKey)
  KEYS[4] the organization's feedback index (feedbackIndexKey)
  ARGV[1] execution id
  ARGV[2] the answer (a FeedbackEntry's JSON)
  ARGV[3] the answer's time (ms)
  ARGV[4] how many answers are kept per execution (older ones are dropped)

  Returns CODE.noSuchExecution when the organization has no such execution (no record and no bundle: unknown, another
  organization's, or gone), else how many answers the execution now has.
]]

local recordTtl = redis.call('PTTL', KEYS[1])
local evidenceTtl = redis.call('PTTL', KEYS[2])
if recordTtl == -2 and evidenceTtl == -2 then return CODE.noSuchExecution end

local indexTtl = redis.call('PTTL', KEYS[4])
local count = redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[4]), -1)
redis.call('ZADD', KEYS[4], tonumber(ARGV[3]), ARGV[1])

-- -1: kept without expiry (not written by this service, but then so is its feedback).
if recordTtl == -1 or evidenceTtl == -1 then
  redis.call('PERSIST', KEYS[3])
  redis.call('PERSIST', KEYS[4])
else
  local ttl = math.max(recordTtl, evidenceTtl)
  redis.call('PEXPIRE', KEYS[3], ttl)
  -- The index outlives every execution in it; a member whose feedback is gone is dropped when read.
  if indexTtl ~= -1 and indexTtl < ttl then redis.call('PEXPIRE', KEYS[4], ttl) end
end
return math.min(count, tonumber(ARGV[4]))
