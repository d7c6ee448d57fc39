--[[
  An organization's pace: its executions finished in the last minute (its `finished` key, kept by
  finish-execution.lua), and the answer to a request over one of its limits, from which the API derives
  Retry-After (limitExceeded in execution-lifecycle.ts).
]]

-- {CODE.overLimit, executions in flight in the lane, finished in the last minute, ms until the first in flight stops counting}
local function overLimit(finished, lane, now, inFlight)
  redis.call('ZREMRANGEBYSCORE', finished, '-inf', now - PACE_WINDOW_MS)
  local first = redis.call('ZRANGE', lane, 0, 0, 'WITHSCORES')
  local untilFirst = 0
  if first[2] then untilFirst = tonumber(first[2]) - now end
  return {CODE.overLimit, inFlight, redis.call('ZCARD', finished), untilFirst}
end
