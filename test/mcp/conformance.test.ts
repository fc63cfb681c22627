// The public MCP conformance suite (@modelcontextprotocol/conformance, its server scenarios,
// unmodified) against a remote gateway (docs/mcp.md, "Remote gateways"): the service as `warden
// serve` runs it (src/app/server.ts, HTTPS on a port), a gateway whose upstream is the suite's own
// reference server (./conformance/everything-server.ts, vendored unmodified, behind an HTTPS front
// as gateways require), a policy that allows its tools. The suite's client speaks no OAuth, so a
// loopback front adds the person's access token to each of its requests, as a signed-in client
// would; nothing else is changed between the suite and the gateway. The suite's summary is
// printed; every scenario the reference server passes must pass through the gateway too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/free-port.ts";
import { serve } from "../../src/app/server.ts";
import { createLogger } from "../../src/log.ts";
import { gatewayResource } from "../../src/oauth/resources.ts";
import { grantWithTokens } from "../helpers/oauth.ts";
import { testConfig, uniqueEmail } from "../helpers/service.ts";
import { planSetAsApproved } from "../helpers/sql.ts";
import { devCertificate } from "../security/helpers.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SUITE = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const EVERYTHING = join(import.meta.dir, "conformance", "everything-server.ts");
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

const POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [{ id: "conformance_tools", effect: "allow", reason: "the suite's tools", when: { actions: ["mcp.everything.*"] } }],
};


/** Runs the suite's server scenarios against url; the summary's lines by scenario, and the totals. */
async function conformance(url: string): Promise<{ scenarios: Map<string, { passed: number; failed: number }>; passed: number; failed: number; output: string }> {
  const cwd = mkdtempSync(join(tmpdir(), "warden-conformance-"));
  const proc = Bun.spawn([process.execPath, SUITE, "server", "--url", url], { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  const scenarios = new Map<string, { passed: number; failed: number }>();
  for (const m of out.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gm)) scenarios.set(m[1]!, { passed: Number(m[2]), failed: Number(m[3]) });
  const total = /Total: (\d+) passed, (\d+) failed/.exec(out);
  return { scenarios, passed: Number(total?.[1] ?? 0), failed: Number(total?.[2] ?? 0), output: out + err };
}

describe("the MCP conformance suite through a remote gateway", () => {
  let everything: ReturnType<typeof Bun.spawn>;
  let upstreamFront: ReturnType<typeof Bun.serve>;
  let agentFront: ReturnType<typeof Bun.serve>;
  let server: Awaited<ReturnType<typeof serve>>;
  let everythingUrl = "";

  beforeAll(async () => {
    const { cert, key } = await devCertificate();
    const everythingPort = freePort();
    everything = Bun.spawn([process.execPath, EVERYTHING], { env: { ...process.env, PORT: String(everythingPort) }, stdout: "pipe", stderr: "inherit" });
    everythingUrl = `http://localhost:${everythingPort}/mcp`;
    for (let i = 0; i < 100; i++) {
      if (await fetch(`http://127.0.0.1:${everythingPort}/mcp`, { method: "GET" }).then(() => true, () => false)) break;
      await Bun.sleep(50);
    }
    // HTTPS in front of it, as gateways require of an upstream: bytes passed as they come (event streams too).
    upstreamFront = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") },
      idleTimeout: 0,
      async fetch(req) {
        const url = new URL(req.url);
        const headers = new Headers(req.headers);
        headers.set("host", `localhost:${everythingPort}`);
        const res = await fetch(`http://127.0.0.1:${everythingPort}${url.pathname}${url.search}`, { method: req.method, headers, body: req.body, redirect: "manual" });
        return new Response(res.body, { status: res.status, headers: res.headers });
      },
    });

    const port = freePort();
    const origin = `https://127.0.0.1:${port}`;
    const dataDir = mkdtempSync(join(tmpdir(), "warden-conformance-data-"));
    server = await serve(testConfig({ port, host: "127.0.0.1", dataDir, publicUrl: origin, databaseUrl: process.env.TEST_DATABASE_URL || undefined, webhookAllowPrivate: true, extraCaCerts: cert }), {
      log: createLogger("warn", () => {}),
    });
    const api = async (method: string, path: string, token: string | undefined, json: unknown) => {
      const res = await fetch(origin + path, { ...insecure, method, headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(json) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const owner = await api("POST", "/auth/signup", undefined, { email: uniqueEmail("conformance"), password: "a lantern by the quay" });
    expect(owner.status).toBe(201);
    await planSetAsApproved(server.service.deps.db, owner.body.tenant_id, "pro");
    expect((await api("PUT", "/customer/policy", owner.body.token, { document: POLICY })).status).toBe(200);
    const made = await api("POST", "/customer/mcp/gateways", owner.body.token, { name: "everything", upstream_url: `https://127.0.0.1:${upstreamFront.port}/mcp`, upstream_auth: "none" });
    expect(made.status).toBe(201);
    const gatewayId = made.body.gateway_id as string;
    const resource = gatewayResource(origin, gatewayId);
    let accessToken = "";

    // The suite's client, signed in: each of its requests carries the access token, nothing else changes.
    agentFront = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 0,
      async fetch(req) {
        const url = new URL(req.url);
        const headers = new Headers(req.headers);
        headers.set("authorization", `Bearer ${accessToken}`);
        headers.delete("host");
        const res = await fetch(`${origin}/mcp/${gatewayId}${url.search}`, { ...insecure, method: req.method, headers, body: req.body, redirect: "manual" });
        return new Response(res.body, { status: res.status, headers: res.headers });
      },
    });
    // The suite's client is a local agent at this loopback address, as a desktop agent is: the
    // person consented for its redirect URI there, so that origin is the agent's own.
    const redirectUri = `http://127.0.0.1:${agentFront.port}/callback`;
    const tokens = await grantWithTokens({ gatewayId, tenantId: owner.body.tenant_id, name: "everything", resource }, owner.body.member_id, { service: server.service, clientName: "conformance suite", redirectUri });
    accessToken = tokens.access_token;
  }, 120_000);

  afterAll(async () => {
    agentFront?.stop(true);
    upstreamFront?.stop(true);
    everything?.kill();
    await server?.stop?.();
  });

  test(
    "the suite's server scenarios: all pass against its reference server, and all of them through the gateway",
    async () => {
      const direct = await conformance(everythingUrl);
      const through = await conformance(`http://127.0.0.1:${agentFront.port}/mcp`);
      const lines = [...through.scenarios].map(([name, r]) => `${r.failed === 0 ? "pass" : "FAIL"} ${name} (${r.passed}/${r.passed + r.failed})`);
      console.log(`MCP conformance (server scenarios, @modelcontextprotocol/conformance 0.1.16): reference server ${direct.passed}/${direct.passed + direct.failed}; through the remote gateway ${through.passed}/${through.passed + through.failed} checks\n  ${lines.join("\n  ")}`);
      expect(direct.failed).toBe(0);
      expect(direct.passed).toBeGreaterThan(0);
      expect(lines.filter((l) => !l.startsWith("pass"))).toEqual([]);
      expect([...through.scenarios.keys()].sort()).toEqual([...direct.scenarios.keys()].sort());
      expect([through.passed, through.failed]).toEqual([direct.passed, 0]);
    },
    300_000,
  );
});
