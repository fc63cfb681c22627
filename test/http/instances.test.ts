// Two warden processes on one PostgreSQL database, as behind a load balancer
// (docs/deployment.md): nothing that matters lives in one instance's memory, so quotas stay exact,
// revocation is immediate and brute-force limits are shared while requests alternate between them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { setPlan, setUsage, SMALL_PAYMENT } from "../helpers/customer.ts";
import { uniqueEmail } from "../helpers/service.ts";

const ROOT = join(import.meta.dir, "..", "..");
const DATABASE_URL = process.env.TEST_DATABASE_URL;
const LOGIN_LIMIT = 4;

interface Instance {
  name: string;
  url: string;
  proc: Subprocess<"ignore", "pipe", "inherit">;
  dataDir: string;
}

interface Reply {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** Starts `bun src/cli/main.ts serve` on a free port and waits for its "listening" log line. */
async function start(name: string): Promise<Instance> {
  const dataDir = mkdtempSync(join(tmpdir(), `warden-${name}-`));
  const proc = Bun.spawn([process.execPath, "src/cli/main.ts", "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL,
      DATA_DIR: dataDir, // its own development certificate and mail outbox
      PORT: "0",
      METRICS_ADDR: "off",
      BCRYPT_COST: "4",
      LOG_LEVEL: "info",
      JWT_SECRET: "", // the secret kept in the database, shared by both
      RATE_LIMIT_AUTH_ADDRESS: "100000/60",
      // Per (email, address): every request here comes from the same (unknown) address.
      RATE_LIMIT_LOGIN_PAIR: `${LOGIN_LIMIT}/900`,
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    const line = buffered.split("\n").find((l) => l.includes('"event":"listening"'));
    if (line) {
      // Keep draining the log so a full pipe never stalls the instance.
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return { name, url: JSON.parse(line).url, proc, dataDir };
    }
  }
  proc.kill();
  throw new Error(`instance ${name} did not start: ${buffered}`);
}

async function send(instance: Instance, method: string, path: string, opts: { json?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(instance.url + path, {
    method,
    headers,
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
    tls: { rejectUnauthorized: false },
  } as RequestInit);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers };
}

describe.skipIf(!DATABASE_URL)("two instances on one PostgreSQL database", () => {
  let a: Instance;
  let b: Instance;
  /** a, b, a, b, ...: the instance for the i-th request of an alternating run. */
  const nth = (i: number) => (i % 2 === 0 ? a : b);

  const signup = async (instance: Instance) => {
    const email = uniqueEmail("instances");
    const reply = await send(instance, "POST", "/auth/signup", { json: { email, password: "correct horse battery staple" } });
    expect(reply.status).toBe(201);
    return { email, token: reply.body.token as string, tenantId: reply.body.tenant_id as string, apiKey: reply.body.api_key as string };
  };
  const protect = (instance: Instance, secret: string, input: unknown = SMALL_PAYMENT, headers: Record<string, string> = {}) =>
    send(instance, "POST", "/v1/protect", { json: input, headers: { "x-api-key": secret, ...headers } });

  beforeAll(async () => {
    [a, b] = await Promise.all([start("a"), start("b")]);
  }, 30_000);

  afterAll(async () => {
    for (const instance of [a, b]) {
      if (!instance) continue;
      instance.proc.kill("SIGTERM");
      await instance.proc.exited;
      rmSync(instance.dataDir, { recursive: true, force: true });
    }
  });

  test("a session and a key made on one instance work on the other", async () => {
    const user = await signup(a);
    expect((await send(b, "GET", "/customer/account", { headers: { authorization: `Bearer ${user.token}` } })).body).toMatchObject({ ok: true, tenant_id: user.tenantId });
    expect((await protect(b, user.apiKey)).status).toBe(200);
    expect((await send(a, "GET", "/health")).body.database).toBe("postgres");
  });

  test("the daily protect quota holds exactly under a burst that alternates between instances", async () => {
    const user = await signup(b);
    await setUsage(user.tenantId, 990, 0);
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => protect(nth(i), user.apiKey)));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(14);
    for (const refused of replies.filter((r) => r.status === 429)) expect(refused.body).toMatchObject({ error: "quota_exceeded", limit: "protect_per_day" });
    // Each success saw its own remaining count: 9, 8, ..., 0, every one exactly once.
    const remaining = replies.filter((r) => r.status === 200).map((r) => Number(r.headers.get("ratelimit-remaining")));
    expect(remaining.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const dashboard = await send(a, "GET", "/customer/dashboard", { headers: { authorization: `Bearer ${user.token}` } });
    expect(dashboard.body.usage).toMatchObject({ protect_today: 1000, receipts_stored: 10 });
  });

  test("a usage limit in the policy holds exactly under a burst alternating between instances: 50 against 10, 10 ALLOWED", async () => {
    const user = await signup(a);
    await setPlan(user.tenantId, "pro");
    const capped = {
      default_effect: "deny",
      default_reason: "no_rule_matched",
      rules: [
        { id: "cap", effect: "deny", reason: "too_many", when: { actions: ["email.send"], usage: { sum: "count", per: "tenant", window: "day", gt: 10 } } },
        { id: "emails", effect: "allow", reason: "ok", when: { actions: ["email.send"] } },
      ],
    };
    expect((await send(b, "PUT", "/customer/policy", { json: { document: capped }, headers: { authorization: `Bearer ${user.token}` } })).status).toBe(200);
    // One protect on each instance first, so that each knows the counter and decides the burst
    // on what it knows: the other instance's appends make that stale, and the append refuses it.
    const warm = [await protect(a, user.apiKey, { action: "email.send" }), await protect(b, user.apiKey, { action: "email.send" })];
    expect(warm.map((r) => r.body.payload.usage[0].before)).toEqual([0, 1]);
    const burst = await Promise.all(Array.from({ length: 48 }, (_, i) => protect(nth(i), user.apiKey, { action: "email.send" })));
    const replies = [...warm, ...burst];
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies.filter((r) => r.body.decision === "ALLOWED")).toHaveLength(10);
    // Each ALLOWED read its own "before": 0 to 9, every one exactly once.
    const before = replies.filter((r) => r.body.decision === "ALLOWED").map((r) => r.body.payload.usage[0].before);
    expect(before.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test("the daily execute quota holds exactly too, and a receipt executes once across instances", async () => {
    const user = await signup(a);
    const allowed: string[] = [];
    for (let i = 0; i < 8; i++) {
      const reply = await protect(nth(i), user.apiKey);
      expect(reply.body.decision).toBe("ALLOWED");
      allowed.push(reply.body.receipt_id);
    }
    await setUsage(user.tenantId, 8, 95);
    // Every receipt twice, once on each instance: at most one execution each, at most 5 in all.
    const replies = await Promise.all(allowed.flatMap((id, i) => [a, b].map((instance, j) =>
      send(nth(i + j), "POST", "/v1/execute", { json: { receipt_id: id }, headers: { "x-api-key": user.apiKey } }).then((r) => ({ id, r, instance })),
    )));
    const executed = replies.filter(({ r }) => r.status === 200);
    expect(executed).toHaveLength(5);
    expect(new Set(executed.map(({ id }) => id)).size).toBe(5);
    for (const { r } of replies.filter(({ r }) => r.status !== 200)) {
      expect([409, 429]).toContain(r.status);
      expect(r.body.error).toBe(r.status === 409 ? "already_executed" : "quota_exceeded");
    }
    const dashboard = await send(b, "GET", "/customer/dashboard", { headers: { authorization: `Bearer ${user.token}` } });
    expect(dashboard.body.usage).toMatchObject({ execute_today: 100 });
  });

  test("revocation and rotation on one instance take effect on the other at once", async () => {
    const user = await signup(a);
    const session = { authorization: `Bearer ${user.token}` };
    for (let round = 0; round < 3; round++) {
      const [here, there] = round % 2 === 0 ? [a, b] : [b, a];
      const created = await send(here, "POST", "/customer/keys", { json: { label: `round ${round}` }, headers: session });
      expect(created.status).toBe(201);
      // Used on the other instance first, so whatever it might remember, it has seen the key live.
      expect((await protect(there, created.body.secret)).status).toBe(200);
      expect((await send(here, "POST", `/customer/keys/${created.body.key_id}/revoke`, { headers: session })).status).toBe(200);
      expect((await protect(there, created.body.secret)).body.error).toBe("key_revoked");
      expect((await protect(here, created.body.secret)).body.error).toBe("key_revoked");
    }

    const keys = await send(b, "GET", "/customer/keys", { headers: session });
    const first = keys.body.keys.find((k: { status: string }) => k.status === "active");
    expect((await protect(a, user.apiKey)).status).toBe(200);
    const rotated = await send(b, "POST", `/customer/keys/${first.key_id}/rotate`, { headers: session });
    expect(rotated.status).toBe(201);
    expect((await protect(a, user.apiKey)).body.error).toBe("key_revoked");
    expect((await protect(a, rotated.body.secret)).status).toBe(200);
  });

  test("a key suspended, limited to some actions or given an expiry on one instance is held to it on the other at once", async () => {
    const user = await signup(a);
    const session = { authorization: `Bearer ${user.token}` };
    const keyId = (await send(a, "GET", "/customer/keys", { headers: session })).body.keys[0].key_id;
    const read = { action: "document.read" };
    const patch = (instance: Instance, json: unknown) => send(instance, "PATCH", `/customer/keys/${keyId}`, { json, headers: session });
    // Each instance has read the key before each change.
    for (const instance of [a, b]) expect((await protect(instance, user.apiKey, read)).status).toBe(200);
    expect((await patch(a, { enabled: false })).status).toBe(200);
    for (const instance of [b, a]) expect((await protect(instance, user.apiKey, read)).body.error).toBe("key_disabled");
    expect((await patch(b, { enabled: true, actions: ["document.*"] })).status).toBe(200);
    for (const instance of [a, b]) {
      expect((await protect(instance, user.apiKey, read)).status).toBe(200);
      expect((await protect(instance, user.apiKey)).body.error).toBe("action_not_allowed");
    }
    const soon = Date.now() + 1500;
    expect((await patch(a, { expires_at: new Date(soon).toISOString() })).status).toBe(200);
    for (const instance of [b, a]) expect((await protect(instance, user.apiKey, read)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, soon - Date.now() + 50));
    for (const instance of [b, a]) expect((await protect(instance, user.apiKey, read)).body.error).toBe("key_expired");
  });

  test("login attempts count against one limit whichever instance answers", async () => {
    const user = await signup(b);
    const attempt = (i: number) => send(nth(i), "POST", "/auth/login", { json: { email: user.email, password: "not the password at all" } });
    for (let i = 0; i < LOGIN_LIMIT; i++) expect((await attempt(i)).status).toBe(401);
    for (let i = LOGIN_LIMIT; i < LOGIN_LIMIT + 2; i++) {
      const refused = await attempt(i);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe("rate_limited");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // The right password is refused as well while the limit holds, on both instances.
    for (const instance of [a, b]) {
      expect((await send(instance, "POST", "/auth/login", { json: { email: user.email, password: "correct horse battery staple" } })).status).toBe(429);
    }
  });

  test("an Idempotency-Key replays the first response byte for byte on the other instance", async () => {
    const user = await signup(a);
    const key = { "idempotency-key": `instances-${crypto.randomUUID()}` };
    const first = await protect(a, user.apiKey, SMALL_PAYMENT, key);
    expect(first.status).toBe(200);
    const again = await protect(b, user.apiKey, SMALL_PAYMENT, key);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect((await protect(b, user.apiKey, { ...SMALL_PAYMENT, amount: 251 }, key)).body.error).toBe("idempotency_mismatch");
  });
});
