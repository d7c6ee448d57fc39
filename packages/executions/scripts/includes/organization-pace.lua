--[[
  An organization's pace: its executions finished in the last minute (the sorted set `finished`, kept by
  finish-execution.lua), and the answer to a request over one of its limits, from which the API derives
  Retry-After (limitExceeded in execution-lifecycle.ts).
]]
local PACE_WINDOW_MS = 60000

-- {'limit', executions in flight in the lane, finished in the last minute, ms until the first in flight stops counting}
local function overLimit(prefix, lane, now, inFlight)
  local finished = prefix .. 'finished'
  redis.call('ZREMRANGEBYSCORE', finished, '-inf', now - PACE_WINDOW_MS)
  local first = redis.call('ZRANGE', lane, 0, 0, 'WITHSCORES')
  local untilFirst = 0
  if first[2] then untilFirst = tonumber(first[2]) - now end
  return {'limit', inFlight, redis.call('ZCARD', finished), untilFirst}
end
