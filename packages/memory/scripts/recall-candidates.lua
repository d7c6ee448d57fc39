--[[
  The candidates of a recall: the remembered executions that share the most weight of parts with a new
  fingerprint, read from the index and scored here, in Redis, so that only a few ids cross the network.
  Each part's sorted set gives at most its limit of its most recent members within the retention; a
  candidate's score is the sum of the weights of the parts it was found under. Bounded work: at most
  the sum of the limits of members are read.

  KEYS[1..n]  the part sets to read (memoryPartKey, packages/jobs/src/redis-keys.ts): each part of the
              fingerprint in each team scope the caller may see
  ARGV[1]     the retention's cutoff (epoch ms): older members are not read
  ARGV[2]     how many candidates to return
  ARGV[3..]   for each key, in the order of KEYS: its part's weight, then how many of its most recent
              members are read

  Returns a flat list: id, score, issue time (ms), for the best candidates, best first (ties: the most
  recent first, then by id).
]]
local cutoff = ARGV[1]
local top = tonumber(ARGV[2])
local score = {}
local at = {}
local ids = {}

for i, key in ipairs(KEYS) do
  local weight = tonumber(ARGV[1 + 2 * i])
  local limit = tonumber(ARGV[2 + 2 * i])
  local members = redis.call('ZRANGE', key, '+inf', cutoff, 'BYSCORE', 'REV', 'LIMIT', 0, limit, 'WITHSCORES')
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

local function before(a, b)
  if score[a] ~= score[b] then return score[a] > score[b] end
  if at[a] ~= at[b] then return at[a] > at[b] end
  return a < b
end

-- The best `top`, best first, by insertion into a list that never grows past `top`: one comparison for
-- most ids, where sorting every id would compare each of them about log2(#ids) times.
local best = {}
for _, id in ipairs(ids) do
  local n = #best
  if n < top or before(id, best[n]) then
    local place = n < top and n + 1 or n
    while place > 1 and before(id, best[place - 1]) do
      best[place] = best[place - 1]
      place = place - 1
    end
    best[place] = id
  end
end

local out = {}
for _, id in ipairs(best) do
  out[#out + 1] = id
  out[#out + 1] = tostring(score[id])
  out[#out + 1] = string.format('%d', at[id])
end
return out
