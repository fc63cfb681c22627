// LOG_FORMAT: JSON lines by default, aligned text for a person with LOG_FORMAT=pretty; the same
// fields and the same redaction either way.
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";

function linesOf(format?: "json" | "pretty") {
  const lines: string[] = [];
  const log = createLogger("info", (l) => lines.push(l), format);
  log.info("request", { method: "POST", route: "/v1/protect", status: 200, tenant_id: "cust_1", key_id: "key_1", note: "two words", api_key: "warden_live_SECRET", skipped: undefined });
  log.debug("hidden");
  log.error("unexpected_error", { error: "line one\nline two" });
  return lines;
}

test("JSON is the default: one object a line, secrets redacted by field name", () => {
  expect(loadConfig({}).logFormat).toBe("json");
  const [first, second, ...rest] = linesOf();
  expect(rest).toEqual([]);
  expect(JSON.parse(first)).toMatchObject({ level: "info", event: "request", tenant_id: "cust_1", key_id: "key_1", api_key: "[redacted]" });
  expect(JSON.parse(second)).toMatchObject({ level: "error", error: "line one\nline two" });
  expect(first).not.toContain("SECRET");
});

test("LOG_FORMAT=pretty: time, level and event, then key=value, one line each, secrets redacted", () => {
  expect(loadConfig({ LOG_FORMAT: "pretty" }).logFormat).toBe("pretty");
  expect(() => loadConfig({ LOG_FORMAT: "xml" })).toThrow(/LOG_FORMAT must be one of json, pretty/);
  const [first, second, ...rest] = linesOf("pretty");
  expect(rest).toEqual([]);
  expect(first).toMatch(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO  request method=POST route=\/v1\/protect status=200 tenant_id=cust_1 key_id=key_1 note="two words" api_key=\[redacted\]$/,
  );
  expect(second).toMatch(/ ERROR unexpected_error error="line one\\nline two"$/);
  expect(first).not.toContain("SECRET");
});
