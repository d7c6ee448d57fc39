--[[
  What a recall reads, in one step: the team scopes the caller may see; the remembered contents
  (fingerprints' parts, per scope) that share the most weight of parts with the new fingerprint, scored
  here so that only a few ids and records cross the network; the most recent executions of each and the
  record of its latest; and how many executions each of their groups has, the first and the last. Each
  part's index set gives at most its limit of its most recent contents within the retention; a content's
  score is the sum of the weights of the parts it was found under. Bounded work: at most the sum of the
  limits of index members are read, then at most `ids` members of content sets, one record per content,
  and three reads per group and scope.

  The index, content and group sets are named below the memory's prefix as packages/jobs/src/redis-keys.ts
  names them (memoryPartKey, memoryContentKey, memoryGroupKey): `<prefix>index:<tag>:<part>`,
  `<prefix>content:<tag>:<content>`, `<prefix>group:<tag>:<group>`, all in the organization's slot.

  A scope is read when the caller may see its executions, as @pes/memory's visibleTo says (the one rule,
  which checks each record returned again): the organization's (`-`), one of whose teams the caller is
  in, or any for an organization admin.

  KEYS[1]     the organization's scopes and their tags (memoryScopesKey)
  ARGV[1]     the memory's prefix (memoryPrefix): records are `<prefix><execution id>`
  ARGV[2]     the retention's cutoff (epoch ms): older members are not read
  ARGV[3]     how many contents to return, at most
  ARGV[4]     without ARGV[7]: how many execution ids to return in all, each content's most recent one,
              then more of each content in order while this allows
  ARGV[5]     an execution id never to return (the one recalling)
  ARGV[6]     `1`: every scope (an admin); else the caller's teams as a JSON array
  ARGV[7]     a sorted set holding every execution someone confirmed (the feedback store's index), or
              empty: then every id is one to ask about
  ARGV[8..]   for each indexed part of the fingerprint: its hash, its weight, and how many of the most
              recent members of its index set are read

  Returns { contents, counts }. contents: for the best contents, best first (ties: the most recent
  first, then by member), each as a list: its group, its content, its score, the record of its latest
  execution (nil when gone), then for each of its executions that could be shown: the id, its issue
  time (ms), and `1` when the confirmations are asked about it, else `0`. With ARGV[7], those are its
  latest (of the same time, the first by id) and every one in ARGV[7]'s set within the retention;
  without, its most recent ones (see ARGV[4]), each to be asked about. A content with no execution within
  the retention is left out. counts: for each group of those, in a flat list: the
  group, how many executions it has within the retention in the scopes read, the first and the last
  issue times (ms; 0 when none).
]]
local prefix = ARGV[1]
local cutoff = ARGV[2]
local top = tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
local excluded = ARGV[5]
local confirmed = ARGV[7]

-- The scopes the caller may see, by tag.
local everyTeam = ARGV[6] == '1'
local callerTeams = {}
if not everyTeam then
  for _, team in ipairs(cjson.decode(ARGV[6])) do callerTeams[team] = true end
end
local tags = {}
local scopes = redis.call('HGETALL', KEYS[1])
for i = 1, #scopes, 2 do
  local scope, tag = scopes[i], scopes[i + 1]
  local visible = everyTeam or scope == '-'
  if not visible then
    local ok, teams = pcall(cjson.decode, scope)
    if ok and type(teams) == 'table' then
      for _, team in ipairs(teams) do
        if callerTeams[team] then visible = true end
      end
    end
  end
  if visible then tags[#tags + 1] = tag end
end

-- A candidate is a content in one scope: the same content in two scopes is two candidates, each
-- scope's executions its own. Candidates are numbered, their fields kept in parallel lists and found by
-- scope, then by member: no name is built and no table made per member read.
local candTag, candMember, candScore, candAt = {}, {}, {}, {}
for _, tag in ipairs(tags) do
  local found = {}
  for p = 8, #ARGV, 3 do
    local weight = tonumber(ARGV[p + 1])
    local members = redis.call('ZRANGE', prefix .. 'index:' .. tag .. ':' .. ARGV[p], '+inf', cutoff, 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[p + 2]), 'WITHSCORES')
    for j = 1, #members, 2 do
      local k = found[members[j]]
      if k == nil then
        k = #candMember + 1
        found[members[j]] = k
        candTag[k], candMember[k], candScore[k], candAt[k] = tag, members[j], weight, tonumber(members[j + 1])
      else
        candScore[k] = candScore[k] + weight
      end
    end
  end
end

local function before(a, b)
  if candScore[a] ~= candScore[b] then return candScore[a] > candScore[b] end
  if candAt[a] ~= candAt[b] then return candAt[a] > candAt[b] end
  if candMember[a] ~= candMember[b] then return candMember[a] < candMember[b] end
  return candTag[a] < candTag[b]
end

-- The best `top`, best first, by insertion into a list that never grows past `top`: one comparison for
-- most candidates, where sorting every one would compare each of them about log2(#candidates) times.
local best = {}
for candidate = 1, #candMember do
  local n = #best
  if n < top or before(candidate, best[n]) then
    local place = n < top and n + 1 or n
    while place > 1 and before(candidate, best[place - 1]) do
      best[place] = best[place - 1]
      place = place - 1
    end
    best[place] = candidate
  end
end

-- Of a content's executions, the few read at once: enough for most contents whole.
local FEW = 8

local contents = {}
local groups = {}
local seenGroup = {}
for i, candidate in ipairs(best) do
  local group, content = string.match(candMember[candidate], '^([^:]+):(.+)$')
  if group ~= nil then
    local key = prefix .. 'content:' .. candTag[candidate] .. ':' .. content
    local row = { group, content, tostring(candScore[candidate]), false }
    local function add(id, issued, asked)
      if row[4] == false then row[4] = redis.call('GET', prefix .. id) end
      row[#row + 1] = id
      row[#row + 1] = string.format('%d', issued)
      row[#row + 1] = asked and '1' or '0'
    end
    if confirmed == '' then
      -- No index: the lookup is asked about the most recent executions, each content's latest, then more
      -- of the best while `ids` allows (one for each content still to come kept back).
      local wanted = math.max(1, budget - (#best - i))
      local ids = redis.call('ZRANGE', key, '+inf', cutoff, 'BYSCORE', 'REV', 'LIMIT', 0, wanted + 1, 'WITHSCORES')
      local taken = 0
      for j = 1, #ids, 2 do
        if ids[j] ~= excluded and taken < wanted then
          taken = taken + 1
          add(ids[j], tonumber(ids[j + 1]), true)
        end
      end
      budget = budget - taken
    else
      -- Of one content, only these can be shown: its latest (of the same time, the first by id, as recall
      -- orders equals) and any someone confirmed. A content read whole is checked id by id; a larger one
      -- (a storm) is intersected with the index, whose members are few.
      local ids = redis.call('ZRANGE', key, '+inf', cutoff, 'BYSCORE', 'REV', 'LIMIT', 0, FEW, 'WITHSCORES')
      local latest = nil
      for j = 1, #ids, 2 do
        if ids[j] ~= excluded then
          latest = tonumber(ids[j + 1])
          break
        end
      end
      if latest ~= nil then
        local first = nil
        for _, id in ipairs(redis.call('ZRANGE', key, latest, latest, 'BYSCORE', 'LIMIT', 0, 2)) do
          if first == nil and id ~= excluded then first = id end
        end
        add(first, latest, redis.call('ZSCORE', confirmed, first))
        if #ids < 2 * FEW then
          for j = 1, #ids, 2 do
            if ids[j] ~= excluded and ids[j] ~= first and redis.call('ZSCORE', confirmed, ids[j]) then add(ids[j], tonumber(ids[j + 1]), true) end
          end
        else
          local both = redis.call('ZINTER', 2, key, confirmed, 'WEIGHTS', 1, 0, 'WITHSCORES')
          for j = 1, #both, 2 do
            local issued = tonumber(both[j + 1])
            if both[j] ~= excluded and both[j] ~= first and issued >= tonumber(cutoff) then add(both[j], issued, true) end
          end
        end
      end
    end
    if row[4] ~= false or #row > 4 then
      contents[#contents + 1] = row
      if not seenGroup[group] then
        seenGroup[group] = true
        groups[#groups + 1] = group
      end
    end
  end
end

local counts = {}
for _, group in ipairs(groups) do
  local count, first, last = 0, nil, nil
  for _, tag in ipairs(tags) do
    local key = prefix .. 'group:' .. tag .. ':' .. group
    local n = redis.call('ZCOUNT', key, cutoff, '+inf')
    if n > 0 then
      count = count + n
      local earliest = tonumber(redis.call('ZRANGE', key, cutoff, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')[2])
      local latest = tonumber(redis.call('ZRANGE', key, '+inf', cutoff, 'BYSCORE', 'REV', 'LIMIT', 0, 1, 'WITHSCORES')[2])
      if first == nil or earliest < first then first = earliest end
      if last == nil or latest > last then last = latest end
    end
  end
  counts[#counts + 1] = group
  counts[#counts + 1] = count
  counts[#counts + 1] = string.format('%d', first or 0)
  counts[#counts + 1] = string.format('%d', last or 0)
end
return { contents, counts }
