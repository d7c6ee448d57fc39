--[[
  The candidates of a recall: the remembered executions that share the most weight of parts with a new
  fingerprint, read from the index and scored here, in Redis, so that only a few ids cross the network.
  Each part's sorted set gives at most ARGV[2] of its most recent members within the retention; a
  candidate's score is the sum of the weights of the parts it was found under. Bounded work: at most
  #KEYS * ARGV[2] members are read.

  KEYS[1..n]  the part sets to read (memoryPartKey, packages/jobs/src/redis-keys.ts): each part of the
              fingerprint in each team scope the caller may see
  ARGV[1]     the retention's cutoff (epoch ms): older members are not read
  ARGV[2]     how many of each part's most recent members are read
  ARGV[3]     how many candidates to return
  ARGV[4..]   the weight of each key's part, in the order of KEYS

  Returns a flat list: id, score, issue time (ms), for the best candidates, best first (ties: the most
  recent first, then by id).
]]
local cutoff = ARGV[1]
local perPart = tonumber(ARGV[2])
local top = tonumber(ARGV[3])
local score = {}
local at = {}
local ids = {}

for i, key in ipairs(KEYS) do
  local weight = tonumber(ARGV[3 + i])
  local members = redis.call('ZRANGE', key, '+inf', cutoff, 'BYSCORE', 'REV', 'LIMIT', 0, perPart, 'WITHSCORES')
  for j = 1, #members, 2 do
    local id = members[j]
    local known = score[id]
    if known == nil then
      ids[#ids + 1] = id
      score[id] = weight
      at[id] = tonumber(members[j + 1])
    else
      score[id] = known + weight
    end
  end
end

table.sort(ids, function(a, b)
  if score[a] ~= score[b] then return score[a] > score[b] end
  if at[a] ~= at[b] then return at[a] > at[b] end
  return a < b
end)

local out = {}
for i = 1, math.min(top, #ids) do
  local id = ids[i]
  out[#out + 1] = id
  out[#out + 1] = tostring(score[id])
  out[#out + 1] = string.format('%d', at[id])
end
return out
