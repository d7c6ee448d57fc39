--[[
  Remembers one finished execution's fingerprint: its record, its id in its content's and its group's
  sets (every execution counts), and its content in the index set of each of its parts, scored by the
  latest issue time of that content. An execution whose fingerprint is identical to one remembered
  before (the same parts in the same team scope: a storm of one incident) adds no member to the index:
  it raises its content's score, so that the index grows with distinct contents, not executions. Each
  sorted set written is trimmed of what is past the retention and expires a retention after this write.

  KEYS[1]     the record (memoryRecordKey)
  KEYS[2]     its content's set (memoryContentKey)
  KEYS[3]     its group's set (memoryGroupKey)
  KEYS[4]     the organization's scopes and their tags (memoryScopesKey)
  KEYS[5..]   the index set of each indexed part (memoryPartKey)
  ARGV[1]     the execution id
  ARGV[2]     its issue time (epoch ms): the score
  ARGV[3]     the fingerprint (JSON)
  ARGV[4]     the record's time to live (ms): to the end of its retention
  ARGV[5]     the retention's cutoff (epoch ms): older members are removed
  ARGV[6]     the sets' time to live (ms)
  ARGV[7]     the index sets' member: `<group>:<content>` (hashes)
  ARGV[8]     the team scope, and ARGV[9] its tag in key names
  ARGV[10]    at most this many members in an index set (the most recent)

  Returns 1.
]]
local id, at, cutoff, setTtl = ARGV[1], ARGV[2], '(' .. ARGV[5], ARGV[6]

redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
for i = 2, 3 do
  redis.call('ZADD', KEYS[i], at, id)
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', cutoff)
  redis.call('PEXPIRE', KEYS[i], setTtl)
end
redis.call('HSET', KEYS[4], ARGV[8], ARGV[9])
redis.call('PEXPIRE', KEYS[4], setTtl)
for i = 5, #KEYS do
  -- GT: a content's score is its latest execution's time, whatever order executions are remembered in.
  local added = redis.call('ZADD', KEYS[i], 'GT', at, ARGV[7])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', cutoff)
  -- Only a new content can take a set past its bound.
  if added == 1 then redis.call('ZREMRANGEBYRANK', KEYS[i], 0, -(tonumber(ARGV[10]) + 1)) end
  redis.call('PEXPIRE', KEYS[i], setTtl)
end
return 1
