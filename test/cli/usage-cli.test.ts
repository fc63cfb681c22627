// `warden usage` as a user runs it: the CLI as a child process against a real HTTPS server on the
// shared test database, showing the use of a live budget (GET /customer/usage) with WARDEN_TOKEN.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { createLogger } from "../../src/log.ts";
import { bearer, protect, setPlan } from "../helpers/customer.ts";
import { call, signup, testConfig, testService } from "../helpers/service.ts";
import { runCli } from "../helpers/cli.ts";

const SLOW = 60_000;
const BUDGET = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "eur_per_bot_per_day", effect: "deny", reason: "daily_budget", when: { actions: ["payment.*"], currency: { eq: "EUR" }, usage: { sum: "amount", per: "key", window: "day", gt: 500 } } },
    { id: "payments", effect: "allow", reason: "ok", when: { actions: ["payment.*"] } },
  ],
};
const PAYMENT = { action: "payment.send", amount: 300, currency: "EUR" };

let dir: string;
let started: Awaited<ReturnType<typeof serve>>;
let owner: Awaited<ReturnType<typeof signup>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-usage-cli-"));
  const { db } = await testService();
  owner = await signup();
  await setPlan(owner.tenantId, "pro");
  started = await serve(testConfig({ port: 0, dataDir: dir }), { db, log: createLogger("silent") });
  expect((await call("PUT", "/customer/policy", { json: { document: BUDGET }, headers: bearer(owner.token) })).status).toBe(200);
}, SLOW);

afterAll(async () => {
  await started?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

const cli = (args: string[], token: string | undefined) => runCli(["usage", ...args], { WARDEN_URL: started.url, WARDEN_INSECURE: "1", WARDEN_TOKEN: token, LOG_LEVEL: "silent" });

describe("warden usage", () => {
  test("prints each limit with the key's use of the window: the allowed payment counts, the denied one does not", async () => {
    expect((await protect(owner.apiKey, PAYMENT)).body.decision).toBe("ALLOWED");
    const over = await protect(owner.apiKey, PAYMENT);
    expect(over.body).toMatchObject({ decision: "DENIED", reasons: ["daily_budget"] });
    const shown = await cli([], owner.token);
    expect(shown.code).toBe(0);
    const [limit] = shown.json.limits;
    expect(limit).toMatchObject({ rule: "eur_per_bot_per_day", sum: "amount", per: "key", window: "day", bound: { gt: 500 }, currency: "EUR" });
    expect(limit.usage).toEqual([{ key_id: over.body.key_id, total: 300 }]);
  }, SLOW);

  test("without WARDEN_TOKEN it says what to set (exit 2); an argument is bad usage (exit 2)", async () => {
    const bare = await cli([], undefined);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("WARDEN_TOKEN");
    expect((await cli(["extra"], owner.token)).code).toBe(2);
  }, SLOW);
});
