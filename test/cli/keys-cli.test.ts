// `warden keys list|update|rotate` as a user runs it: a child process against a real HTTPS server
// in this process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { updateBody } from "../../src/cli/keys.ts";
import { GOOD_PASSWORD, openTestDb, testConfig, uniqueEmail } from "../helpers/service.ts";
import { runCli } from "../helpers/cli.ts";

const SLOW = 60_000;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

let dir: string;
let url: string;
let token: string;
let apiKey: string;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-keys-cli-"));
  const db = await openTestDb();
  const started = await serve(testConfig({ port: 0, dataDir: join(dir, "data"), logLevel: "warn" }), { db });
  stop = started.stop;
  url = started.url;
  const res = await fetch(`${url}/auth/signup`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: uniqueEmail("keys-cli"), password: GOOD_PASSWORD }) });
  const signup = (await res.json()) as Record<string, string>;
  token = signup.token!;
  apiKey = signup.api_key!;
}, SLOW);

afterAll(async () => {
  await stop?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

const cli = (args: string[], env: Record<string, string> = {}) => runCli(["keys", ...args], { WARDEN_URL: url, WARDEN_INSECURE: "1", WARDEN_TOKEN: token, ...env });
const protect = async (secret: string, action: string) =>
  (await fetch(`${url}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": secret }, body: JSON.stringify({ action }) })).status;

describe("warden keys", () => {
  test("list, update (every flag, none clears), rotate with an overlap", async () => {
    const listed = await cli(["list"]);
    expect(listed.code).toBe(0);
    const [key] = JSON.parse(listed.stdout).keys;
    expect(key).toMatchObject({ status: "active", enabled: true, actions: null, limits: {}, metadata: {} });

    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const updated = await cli(["update", key.key_id, "--disable", "--actions", "document.*,email.send", "--limits", "protect_per_day=10,per_second=5",
      "--allowed-ips", "0.0.0.0/0,::/0", "--metadata", "agent=bot,owner=ops", "--expires-at", expires, "--label", "agent"]);
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ label: "agent", enabled: false, expires_at: expires, actions: ["document.*", "email.send"],
      limits: { protect_per_day: 10, per_second: 5 }, allowed_ips: ["0.0.0.0/0", "::/0"], metadata: { agent: "bot", owner: "ops" } });
    expect(await protect(apiKey, "document.read")).toBe(401);
    const cleared = await cli(["update", key.key_id, "--enable", "--actions", "none", "--limits", "none", "--allowed-ips", "none", "--metadata", "none", "--expires-at", "none"]);
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ enabled: true, expires_at: null, actions: null, limits: {}, allowed_ips: null, metadata: {} });

    const rotated = await cli(["rotate", key.key_id, "--overlap", "600"]);
    expect(rotated.code).toBe(0);
    const body = JSON.parse(rotated.stdout);
    expect(await protect(apiKey, "document.read")).toBe(200);
    expect(await protect(body.secret, "document.read")).toBe(200);
  }, SLOW);

  test("refusals exit 1 on stderr; bad usage exits 2", async () => {
    const refused = await cli(["update", "key_" + "0".repeat(22), "--disable"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("not_found");
    for (const args of [["update"], ["update", "key_x"], ["update", "key_x", "--enable", "--disable"], ["rotate", "key_x", "--overlap", "86401"], ["frobnicate"], ["update", "key_x", "--limits", "rate=fast"]]) {
      expect((await cli(args)).code).toBe(2);
    }
  }, SLOW);

  test("updateBody: the PATCH body the flags ask for", () => {
    expect(updateBody({ metadata: "a=1,b=x=y", limits: "burst=3" })).toEqual({ metadata: { a: "1", b: "x=y" }, limits: { burst: 3 } });
    expect(updateBody({ "allowed-ips": "none", disable: true })).toEqual({ allowed_ips: null, enabled: false });
  });
});
