-- wrk script: one request shape per run, set through environment variables, and a JSON summary
-- at the end (latencies in microseconds) for scripts/bench.ts to read.
local method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY")
local headers = {}
for pair in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(pair, "^([^:]+):%s*(.*)$")
  if name then headers[name] = value end
end

-- Protect-then-execute: each connection alternates, executing the receipt its protect returned.
local pair = os.getenv("BENCH_PAIR") == "1"
local pending = nil

request = function()
  if pair and pending then
    local id = pending
    pending = nil
    return wrk.format("POST", "/v1/execute", headers, '{"receipt_id":"' .. id .. '"}')
  end
  return wrk.format(method, nil, headers, body)
end

response = function(status, hdrs, resp)
  if pair and status == 200 and resp then
    local id = string.match(resp, '"receipt_id":"(rcpt_[%w]+)"')
    if id and not string.find(resp, '"executed"') then pending = id end
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end
