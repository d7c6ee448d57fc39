--[[
  Appends an execution's audit record to its organization's audit stream, once per execution: a job
  that runs again (after a worker died holding it) does not append a second record. Entries older than
  the retention are trimmed as it appends (XADD MINID ~: whole macro nodes, so a few older entries may
  stay a little longer), and the stream expires after the retention when nothing is appended any more.
  Both keys are below the organization's prefix (one slot on a cluster).

  KEYS[1] the organization's audit stream (auditStreamKey, packages/jobs/src/redis-keys.ts)
  KEYS[2] the execution's once-only marker (auditRecordedKey)
  ARGV[1] the record (JSON)
  ARGV[2] retention (ms)

  Returns the new entry's id, or false when the execution's record was appended already.
]]
local retention = tonumber(ARGV[2])
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', retention) then
  return false
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local minId = tostring(math.max(0, now - retention)) .. '-0'
local id = redis.call('XADD', KEYS[1], 'MINID', '~', minId, '*', 'record', ARGV[1])
redis.call('PEXPIRE', KEYS[1], retention)
return id
