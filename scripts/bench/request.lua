-- wrk script: one request shape per run, set through environment variables, and a JSON summary
-- at the end (latencies in microseconds) for scripts/bench.ts to read.
local method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY")
local headers = {}
for pair in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(pair, "^([^:]+):%s*(.*)$")
  if name then headers[name] = value end
end

-- Several tenants: each thread starts at another key and each request takes the next one, so
-- the connections spread over every tenant.
-- BENCH_KEYS: "tenant_id=secret,..."; execute looks the key up by the tenant of the receipt.
local keys = {}
local keyOf = {}
for tenant, k in string.gmatch(os.getenv("BENCH_KEYS") or "", "([^,=]+)=([^,]+)") do
  table.insert(keys, k)
  keyOf[tenant] = k
end
local nextKey = 0
setup = function(thread)
  nextKey = nextKey + 1
  thread:set("offset", nextKey)
end
init = function(args)
  nextKey = tonumber(offset) or 0
end

local function headersFor()
  if #keys == 0 then return headers end
  nextKey = nextKey + 1
  local h = {}
  for k, v in pairs(headers) do h[k] = v end
  h["X-API-Key"] = keys[(nextKey % #keys) + 1]
  return h
end

-- Protect-then-execute: each connection alternates, executing the receipt its protect returned.
local pair = os.getenv("BENCH_PAIR") == "1"
local pending = nil
local pendingHeaders = nil

request = function()
  if pair and pending then
    local id = pending
    pending = nil
    -- The execute goes with the key of the tenant whose receipt it is.
    return wrk.format("POST", "/v1/execute", pendingHeaders, '{"receipt_id":"' .. id .. '"}')
  end
  return wrk.format(method, nil, headersFor(), body)
end

response = function(status, hdrs, resp)
  if pair and status == 200 and resp then
    local id = string.match(resp, '"receipt_id":"(rcpt_[%w]+)"')
    if id and not string.find(resp, '"executed"') then
      pending = id
      pendingHeaders = headers
      local tenant = string.match(resp, '"tenant_id":"(cust_[%w]+)"')
      if tenant and keyOf[tenant] then
        pendingHeaders = {}
        for k, v in pairs(headers) do pendingHeaders[k] = v end
        pendingHeaders["X-API-Key"] = keyOf[tenant]
      end
    end
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end
