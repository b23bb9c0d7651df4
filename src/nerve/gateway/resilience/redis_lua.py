"""The Lua functions of the gateway's Redis state, written once and composed into scripts.

`RATE_LUA` (the three rate limits of redis_limits.py) and `GATE_LUA` (breaker + 429 cooldown
of redis_breaker.py / redis_cooldown.py) define functions over key and argument tables rather
than KEYS/ARGV, so the standalone scripts and the one admission script of a chat request
(shared_admit.py: limits, key limits, budget hold and breaker gate in one round trip) run the
same code.

    rate_check(k, a) -> {1, tokens} | {0, reason, retry_after}     (writes nothing that counts)
    rate_commit(k, a, tokens)                                        (admit: lease, window, bucket)
        k = {window ZSET, bucket HASH, leases ZSET}
        a = {now, window_requests, window_seconds, burst, refill, max_concurrent, lease_seconds,
             lease, ttl window ms, ttl bucket ms, ttl leases ms}
    breaker_admit(kb, a) -> 0 refused | 1 admitted | 2 pristine
    breaker_gate(kb, kz, a) -> "c<seconds>" cooling after a 429 | tostring(breaker_admit)
        kb = breaker HASH, kz = cooldown ZSET,
        a = {now, half_open_after, probe_timeout, ttl ms, member (the target) for the ZSET}
"""

from __future__ import annotations

__all__ = ["GATE_LUA", "RATE_LUA", "RATE_SCRIPT"]

RATE_LUA = """
local function fmt(x) return string.format('%.17g', x) end
local function rate_check(k, a)
  local now = tonumber(a[1])
  redis.call('ZREMRANGEBYSCORE', k[3], '-inf', fmt(now - tonumber(a[7])))
  if redis.call('ZCARD', k[3]) >= tonumber(a[6]) then return {0, 'concurrent', '1'} end
  local burst, refill = tonumber(a[4]), tonumber(a[5])
  local bucket = redis.call('HMGET', k[2], 'tokens', 'at')
  local tokens, at = tonumber(bucket[1]), tonumber(bucket[2])
  if tokens == nil or at == nil then tokens, at = burst, now end
  tokens = math.min(burst, tokens + math.max(0, now - at) * refill)
  local horizon = now - tonumber(a[3])
  redis.call('ZREMRANGEBYSCORE', k[1], '-inf', fmt(horizon))
  local burst_wait, window_wait = 0, 0
  if tokens < 1 - 1e-9 then burst_wait = (1 - tokens) / refill end
  if redis.call('ZCARD', k[1]) >= tonumber(a[2]) then
    local oldest = redis.call('ZRANGE', k[1], 0, 0, 'WITHSCORES')
    window_wait = tonumber(oldest[2]) - horizon
  end
  if burst_wait > 0 or window_wait > 0 then
    local reason = 'burst'
    if window_wait >= burst_wait then reason = 'window' end
    return {0, reason, fmt(math.max(burst_wait, window_wait))}
  end
  return {1, tokens}
end
local function rate_commit(k, a, tokens)
  redis.call('HSET', k[2], 'tokens', fmt(math.max(0, tokens - 1)), 'at', a[1])
  redis.call('ZADD', k[1], a[1], a[8])
  redis.call('ZADD', k[3], a[1], a[8])
  redis.call('PEXPIRE', k[1], a[9])
  redis.call('PEXPIRE', k[2], a[10])
  redis.call('PEXPIRE', k[3], a[11])
end
"""

# One acquire: KEYS = k, ARGV = a (above). {1} admitted, else the refusal.
RATE_SCRIPT = (
    RATE_LUA
    + """
local verdict = rate_check(KEYS, ARGV)
if verdict[1] == 0 then return verdict end
rate_commit(KEYS, ARGV, verdict[2])
return {1}
"""
)

GATE_LUA = """
local function breaker_admit(kb, a)
  local b = redis.call('HMGET', kb, 'state', 'opened_at', 'probe_since')
  if not b[1] then return 2 end  -- pristine: no story at all
  if b[1] == 'closed' then return 1 end
  local now = tonumber(a[1])
  if b[1] == 'open' then
    if now - tonumber(b[2]) < tonumber(a[2]) then return 0 end
    redis.call('HSET', kb, 'state', 'half_open', 'successes', '0')
    b[3] = false
  end
  if b[3] and now - tonumber(b[3]) < tonumber(a[3]) then return 0 end
  redis.call('HSET', kb, 'probe_since', a[1])
  redis.call('PEXPIRE', kb, a[4])
  return 1
end
local function breaker_gate(kb, kz, a)
  local ends = redis.call('ZSCORE', kz, a[5])
  if ends and tonumber(ends) > tonumber(a[1]) then
    return 'c' .. string.format('%.17g', tonumber(ends) - tonumber(a[1]))
  end
  return tostring(breaker_admit(kb, a))
end
"""
