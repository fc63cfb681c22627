// `warden mcp gateway` and `warden mcp serve` end to end (docs/mcp.md): the SDK's own Client as
// the agent, the gateway as a child process (the CLI), a tiny upstream MCP server built with the
// SDK (test/mcp/fixtures/upstream.ts) over stdio and over Streamable HTTP, and the test service
// listening on a port. What reached the upstream is read from the fixture's call log.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { bearer, setPlan } from "../helpers/customer.ts";
import { addMember, type Member } from "../helpers/members.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { upstreamServer } from "./fixtures/upstream.ts";
import { runCli } from "../helpers/cli.ts";
import { argumentsHash } from "../../src/mcp/context.ts";
import { listen, type Listener } from "../../src/runtime.ts";

const ROOT = join(import.meta.dir, "..", "..");
const FIXTURE = join(import.meta.dir, "fixtures", "upstream.ts");
// Each case starts the CLI (and the upstream) as processes on a shared, slow machine.
const SLOW = 60_000;

export const MCP_POLICY = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  rules: [
    { id: "no_system_files", effect: "deny", reason: "system_path", when: { actions: ["mcp.fix.write_file"], context: { path: { prefix: "/etc/" } } } },
    { id: "writes_need_approval", effect: "require_approval", reason: "writes_need_approval", when: { actions: ["mcp.fix.write_file"] }, approval: { quorum: 1 } },
    { id: "echo_ok", effect: "allow", reason: "echo_is_harmless", when: { actions: ["mcp.fix.echo", "mcp.fixture_files.echo"] } },
    { id: "small_payments", effect: "allow", reason: "small_payment", when: { actions: ["mcp.fix.pay"], context: { amount: { lte: 100 } } } },
  ],
};

type Tenant = Awaited<ReturnType<typeof signup>>;
let owner: Tenant;
let approver: Member;
let dir: string;
let wardenUrl: string;
let closedUrl: string;
let front: Listener;
let httpUpstream: ReturnType<typeof Bun.serve>;
const httpHeaders: Record<string, string>[] = [];
const httpCalls: Record<string, unknown>[] = [];
const clients: Client[] = [];
let logs = 0;

beforeAll(async () => {
  const { service } = await testService();
  // Plain HTTP on the loopback, presented to the service as the HTTPS it asks for (TLS is not under test here).
  // listen() is what `warden serve` listens with: its idle timeout is the one in production.
  front = listen({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request, server) => service.handle(new Request(request.url.replace(/^http:/, "https:"), request), { ip: () => server.requestIP(request)?.address }),
  });
  wardenUrl = `http://127.0.0.1:${front.port}`;
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  closedUrl = `http://127.0.0.1:${probe.port}`;
  probe.stop(true);
  // The Streamable HTTP upstream, stateless: a server and a transport per request.
  httpUpstream = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      httpHeaders.push(Object.fromEntries(request.headers));
      const server = upstreamServer((entry) => httpCalls.push(entry));
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      return transport.handleRequest(request);
    },
  });
  dir = mkdtempSync(join(tmpdir(), "warden-mcp-"));
  owner = await signup();
  await setPlan(owner.tenantId, "pro");
  approver = await addMember(owner.token, "approver");
  const published = await call("PUT", "/customer/policy", { json: { document: MCP_POLICY }, headers: bearer(owner.token) });
  expect(published.status).toBe(200);
}, SLOW);

// Each case's gateways (and their upstreams) end with it.
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await front?.stop(true);
  httpUpstream?.stop(true);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

interface Gateway {
  client: Client;
  /** The tools/calls the stdio upstream received. */
  upstreamCalls(): { tool: string; arguments: Record<string, unknown>; warden_env: string[] }[];
  stderr(): string;
}

/** The agent: the SDK's Client connected to `warden mcp ARGS` over stdio. */
async function agent(args: string[], env: Record<string, string> = {}): Promise<Gateway> {
  const log = join(dir, `calls-${logs++}.jsonl`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["src/cli/main.ts", "mcp", ...args],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", WARDEN_URL: wardenUrl, WARDEN_API_KEY: owner.apiKey, FIXTURE_LOG: log, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => (stderr += String(chunk)));
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return {
    client,
    upstreamCalls() {
      let text = "";
      try {
        text = readFileSync(log, "utf8");
      } catch {}
      return text.split("\n").filter(Boolean).map((line) => JSON.parse(line));
    },
    stderr: () => stderr,
  };
}

const stdioGateway = (flags: string[] = ["--name", "fix"], env: Record<string, string> = {}) => agent(["gateway", ...flags, "--", process.execPath, FIXTURE], env);
// Bun's toMatchObject writes its asymmetric matchers (expect.stringMatching) into the object it
// checks; a copy keeps the ids the next steps read.
const like = (value: unknown) => expect(structuredClone(value));
const textOf = (result: any) => (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

async function pendingApprovals(): Promise<{ approval_id: string; action_hash: string }[]> {
  const listed = await call("GET", "/customer/approvals?status=pending", { headers: bearer(owner.token) });
  expect(listed.status).toBe(200);
  return listed.body.approvals;
}

describe("mcp gateway in front of a stdio server", () => {
  test("an allowed call is executed, forwarded, and its result names the receipt", async () => {
    const gw = await stdioGateway();
    const result: any = await gw.client.callTool({ name: "echo", arguments: { text: "hi", nested: { n: 3 } } });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]).toEqual({ type: "text", text: "echo: hi" });
    const meta = result._meta.warden;
    like(meta).toMatchObject({ action: "mcp.fix.echo", decision: "ALLOWED", reasons: ["echo_is_harmless"], receipt_id: expect.stringMatching(/^rcpt_/), execute_receipt_id: expect.stringMatching(/^rcpt_/) });
    expect(result._meta.fixture).toBe(true); // the upstream's own _meta is kept
    expect(textOf(result)).toContain(meta.receipt_id);
    expect(gw.upstreamCalls()).toEqual([{ tool: "echo", arguments: { text: "hi", nested: { n: 3 } }, warden_env: [] }]);
    // The receipt binds the action, the flattened arguments and their JCS SHA-256.
    const stored = await call("GET", `/customer/receipts/${meta.receipt_id}`, { headers: bearer(owner.token) });
    expect(stored.body.receipt.payload.input).toEqual({
      action: "mcp.fix.echo",
      context: { text: "hi", "nested.n": 3, arguments_sha256: await argumentsHash({ nested: { n: 3 }, text: "hi" }), arguments_omitted: 0, arguments_truncated: 0 },
    });
    expect(meta.arguments_sha256).toBe(await argumentsHash({ text: "hi", nested: { n: 3 } }));
    const executed = await call("GET", `/customer/receipts/${meta.execute_receipt_id}`, { headers: bearer(owner.token) });
    like(executed.body.receipt).toMatchObject({ kind: "execute", protect_receipt_id: meta.receipt_id });
  }, SLOW);

  test("a denied call is an error result naming the reason and the receipt; the upstream is not called", async () => {
    const gw = await stdioGateway();
    const denied: any = await gw.client.callTool({ name: "delete_everything", arguments: {} });
    expect(denied.isError).toBe(true);
    like(denied._meta.warden).toMatchObject({ action: "mcp.fix.delete_everything", decision: "DENIED", reasons: ["no_rule_matched"], receipt_id: expect.stringMatching(/^rcpt_/) });
    expect(textOf(denied)).toContain("no_rule_matched");
    expect(textOf(denied)).toContain(denied._meta.warden.receipt_id);
    // An argument decides too: the same tool, a system path.
    const system: any = await gw.client.callTool({ name: "write_file", arguments: { path: "/etc/passwd", content: "x" } });
    expect(system.isError).toBe(true);
    expect(system._meta.warden.reasons).toEqual(["system_path"]);
    // A tool the upstream does not have: unknown, not a decision of the policy (no receipt).
    const unknown: any = await gw.client.callTool({ name: "no_such_tool", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toStartWith('Unknown tool: "no_such_tool".');
    expect(textOf(unknown)).toContain("echo, write_file, delete_everything");
    expect(textOf(unknown)).not.toContain("DENIED");
    expect(unknown._meta.warden).toEqual({ action: "mcp.fix.no_such_tool", arguments_sha256: "", decision: "UNDECIDED", error: "unknown tool" });
    expect(gw.upstreamCalls()).toEqual([]);
  }, SLOW);

  test("a call that needs approval, without --wait: an error naming the approval; the same call again after the vote goes through", async () => {
    const gw = await stdioGateway();
    const args = { path: "/tmp/report.txt", content: "numbers" };
    const first: any = await gw.client.callTool({ name: "write_file", arguments: args });
    expect(first.isError).toBe(true);
    const { approval_id, receipt_id } = first._meta.warden;
    expect(approval_id).toMatch(/^apv_/);
    like(first._meta.warden).toMatchObject({ decision: "DENIED", approval_status: "pending", reasons: ["writes_need_approval"] });
    expect(textOf(first)).toContain(approval_id);
    // Asked again before anyone voted: the same approval, not a second one.
    const again: any = await gw.client.callTool({ name: "write_file", arguments: args });
    expect(again._meta.warden.approval_id).toBe(approval_id);
    expect((await pendingApprovals()).filter((a) => a.approval_id === approval_id)).toHaveLength(1);
    expect(gw.upstreamCalls()).toEqual([]);

    const { action_hash } = (await pendingApprovals()).find((a) => a.approval_id === approval_id)!;
    const voted = await call("POST", `/customer/approvals/${approval_id}/votes`, { json: { vote: "approve", action_hash }, headers: bearer(approver.token) });
    expect(voted.status).toBe(200);
    const through: any = await gw.client.callTool({ name: "write_file", arguments: args });
    expect(through.isError).toBeFalsy();
    like(through._meta.warden).toMatchObject({ decision: "ALLOWED", approval_id, receipt_id, approval_status: "approved", outcome_receipt_id: voted.body.outcome_receipt_id });
    // What the model reads names the ALLOWED outcome receipt, not the DENIED protect receipt as allowed.
    const note = through.content.at(-1).text;
    expect(note).toContain(`ALLOWED by approval ${approval_id} (approved); outcome receipt ${voted.body.outcome_receipt_id}`);
    expect(note).toContain(`the protect receipt ${receipt_id} was DENIED pending approval`);
    expect(note).not.toContain(`ALLOWED; receipt ${receipt_id}`);
    expect(gw.upstreamCalls()).toEqual([{ tool: "write_file", arguments: args, warden_env: [] }]);
    const after = await call("GET", `/v1/approvals/${approval_id}`, { headers: { "x-api-key": owner.apiKey } });
    expect(after.body.status).toBe("executed");
  }, SLOW);

  test("--wait: the call waits for the vote, then the outcome is executed and the call forwarded", async () => {
    const gw = await stdioGateway(["--name", "fix", "--wait"]);
    const args = { path: "/tmp/wait.txt", content: "later" };
    const pending = gw.client.callTool({ name: "write_file", arguments: args });
    let approval: { approval_id: string; action_hash: string } | undefined;
    for (let i = 0; i < 200 && !approval; i++) {
      approval = (await pendingApprovals())[0];
      if (!approval) await Bun.sleep(50);
    }
    expect(approval).toBeDefined();
    expect(gw.upstreamCalls()).toEqual([]);
    const voted = await call("POST", `/customer/approvals/${approval!.approval_id}/votes`, { json: { vote: "approve", action_hash: approval!.action_hash }, headers: bearer(approver.token) });
    expect(voted.body.status).toBe("approved");
    const result: any = await pending;
    expect(result.isError).toBeFalsy();
    like(result._meta.warden).toMatchObject({ decision: "ALLOWED", approval_id: approval!.approval_id, outcome_receipt_id: voted.body.outcome_receipt_id, execute_receipt_id: expect.stringMatching(/^rcpt_/) });
    expect(gw.upstreamCalls()).toEqual([{ tool: "write_file", arguments: args, warden_env: [] }]);
    const after = await call("GET", `/v1/approvals/${approval!.approval_id}`, { headers: { "x-api-key": owner.apiKey } });
    expect(after.body.status).toBe("executed");
  }, SLOW);

  test("--wait: a deny vote refuses the call", async () => {
    const gw = await stdioGateway(["--name", "fix", "--wait"]);
    const pending = gw.client.callTool({ name: "write_file", arguments: { path: "/tmp/no.txt", content: "x" } });
    let approval: { approval_id: string; action_hash: string } | undefined;
    for (let i = 0; i < 200 && !approval; i++) {
      approval = (await pendingApprovals())[0];
      if (!approval) await Bun.sleep(50);
    }
    await call("POST", `/customer/approvals/${approval!.approval_id}/votes`, { json: { vote: "deny", action_hash: approval!.action_hash }, headers: bearer(approver.token) });
    const result: any = await pending;
    expect(result.isError).toBe(true);
    like(result._meta.warden).toMatchObject({ approval_id: approval!.approval_id, approval_status: "denied" });
    expect(textOf(result)).toContain("denied");
    expect(gw.upstreamCalls()).toEqual([]);
    // Another gateway process (a restart) making the same call is answered the denied approval by
    // the service: people are not asked again, and nothing is forwarded.
    const restarted = await stdioGateway(["--name", "fix"]);
    const again: any = await restarted.client.callTool({ name: "write_file", arguments: { path: "/tmp/no.txt", content: "x" } });
    expect(again.isError).toBe(true);
    like(again._meta.warden).toMatchObject({ approval_id: approval!.approval_id, approval_status: "denied" });
    expect(textOf(again)).toContain(`approval ${approval!.approval_id} of mcp.fix.write_file is denied`);
    expect((await pendingApprovals()).filter((a) => a.approval_id !== approval!.approval_id)).toEqual([]);
    expect(restarted.upstreamCalls()).toEqual([]);
  }, SLOW);

  test("warden unreachable: refused (fail closed); with --shadow: forwarded and logged", async () => {
    const closed = await stdioGateway(["--name", "fix"], { WARDEN_URL: closedUrl });
    const refused: any = await closed.client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(refused.isError).toBe(true);
    like(refused._meta.warden).toMatchObject({ action: "mcp.fix.echo", decision: "UNDECIDED" });
    expect(textOf(refused)).toContain("unreachable");
    expect(closed.upstreamCalls()).toEqual([]);

    const shadow = await stdioGateway(["--name", "fix", "--shadow"], { WARDEN_URL: closedUrl });
    const forwarded: any = await shadow.client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(forwarded.isError).toBeFalsy();
    expect(forwarded.content[0].text).toBe("echo: hi");
    like(forwarded._meta.warden).toMatchObject({ decision: "UNDECIDED", shadow: true });
    expect(shadow.upstreamCalls()).toHaveLength(1);
    expect(shadow.stderr()).toContain("mcp_call_forwarded");
  }, SLOW);

  test("--shadow with warden up: a denied call is forwarded, its receipt still written", async () => {
    const gw = await stdioGateway(["--name", "fix", "--shadow"]);
    const result: any = await gw.client.callTool({ name: "delete_everything", arguments: {} });
    expect(result.isError).toBeFalsy();
    like(result._meta.warden).toMatchObject({ decision: "DENIED", shadow: true, receipt_id: expect.stringMatching(/^rcpt_/) });
    // A call that needs approval is not held either, even with --wait.
    const waiting = await stdioGateway(["--name", "fix", "--shadow", "--wait"]);
    const held: any = await waiting.client.callTool({ name: "write_file", arguments: { path: "/tmp/shadow.txt", content: "x" } });
    expect(held.isError).toBeFalsy();
    like(held._meta.warden).toMatchObject({ decision: "DENIED", shadow: true, approval_status: "pending", approval_id: expect.stringMatching(/^apv_/) });
    expect(waiting.upstreamCalls().map((c) => c.tool)).toEqual(["write_file"]);
    await call("POST", `/v1/approvals/${held._meta.warden.approval_id}/cancel`, { headers: { "x-api-key": owner.apiKey } });
    expect(gw.upstreamCalls().map((c) => c.tool)).toEqual(["delete_everything"]);
  }, SLOW);

  test("a bad API key: refused, never forwarded, even though warden answered", async () => {
    const gw = await stdioGateway(["--name", "fix"], { WARDEN_API_KEY: "wk_live_not_a_key" });
    const result: any = await gw.client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("401");
    expect(gw.upstreamCalls()).toEqual([]);
  }, SLOW);

  test("everything but tools/call passes through; --hide-denied drops the tools never allowed", async () => {
    const plain = await stdioGateway();
    expect((await plain.client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "write_file", "delete_everything", "pay"]);
    like(plain.client.getServerVersion()).toMatchObject({ name: "fixture files" });
    expect((await plain.client.listResources()).resources).toEqual([{ uri: "fixture://readme", name: "readme", mimeType: "text/plain" }]);
    like((await plain.client.readResource({ uri: "fixture://readme" })).contents[0]).toMatchObject({ text: "the fixture's readme" });
    expect((await plain.client.listPrompts()).prompts.map((p) => p.name)).toEqual(["greet"]);
    expect((await plain.client.getPrompt({ name: "greet" })).messages[0].content).toEqual({ type: "text", text: "hello from the fixture" });

    const hiding = await stdioGateway(["--name", "fix", "--hide-denied"]);
    // write_file stays: a call of it may be approved (and one outside /etc/ is not denied outright);
    // pay stays: small payments are allowed, though a call without arguments is not.
    expect((await hiding.client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "write_file", "pay"]);
    const paid: any = await hiding.client.callTool({ name: "pay", arguments: { amount: 50 } });
    expect(paid.content[0].text).toBe("paid 50");
    like(paid._meta.warden).toMatchObject({ decision: "ALLOWED", reasons: ["small_payment"] });
    const tooMuch: any = await hiding.client.callTool({ name: "pay", arguments: { amount: 500 } });
    expect(tooMuch.isError).toBe(true);
    // Hiding is not the enforcement: a call of a hidden tool is still decided (and denied).
    const hidden: any = await hiding.client.callTool({ name: "delete_everything", arguments: {} });
    expect(hidden.isError).toBe(true);
    expect(hiding.upstreamCalls().map((c) => c.tool)).toEqual(["pay"]);
  }, SLOW);

  test("arguments too large to decide: refused, saying so, before warden or the upstream hears of them", async () => {
    const gw = await stdioGateway();
    let deep: unknown = "x";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const result: any = await gw.client.callTool({ name: "echo", arguments: { text: "hi", deep } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("too deep to decide");
    like(result._meta.warden).toMatchObject({ action: "mcp.fix.echo", decision: "UNDECIDED" });
    expect(gw.upstreamCalls()).toEqual([]);
    // Long strings and more scalars than the context holds are decided: cut or left out, and counted in the receipt.
    const long: any = await gw.client.callTool({ name: "echo", arguments: { text: "t".repeat(600) } });
    const longInput = (await call("GET", `/customer/receipts/${long._meta.warden.receipt_id}`, { headers: bearer(owner.token) })).body.receipt.payload.input;
    expect(longInput.context.text).toBe("t".repeat(500));
    like(longInput.context).toMatchObject({ arguments_omitted: 0, arguments_truncated: 1 });
    const many: any = await gw.client.callTool({ name: "echo", arguments: { text: "hi", ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])) } });
    expect(many.isError).toBeFalsy();
    const manyInput = (await call("GET", `/customer/receipts/${many._meta.warden.receipt_id}`, { headers: bearer(owner.token) })).body.receipt.payload.input;
    // 29 scalars in JCS key order (k0, k1, k10, ...): `text` sorts after them and is left out.
    like(manyInput.context).toMatchObject({ arguments_omitted: 12, arguments_truncated: 0 });
    expect(Object.keys(manyInput.context)).toHaveLength(32);
    expect(manyInput.context.text).toBeUndefined();
    expect(gw.upstreamCalls()).toHaveLength(2);
  }, SLOW);

  test("without --name, the server part is the upstream's advertised name, sanitized", async () => {
    const gw = await stdioGateway([]);
    const result: any = await gw.client.callTool({ name: "echo", arguments: { text: "x" } });
    like(result._meta.warden).toMatchObject({ action: "mcp.fixture_files.echo", decision: "ALLOWED" });
  }, SLOW);
});

describe("mcp gateway in front of a Streamable HTTP server", () => {
  test("allowed and denied calls; the gateway's key and the agent's credentials never reach the upstream", async () => {
    httpCalls.length = 0;
    httpHeaders.length = 0;
    const gw = await agent(["gateway", "--name", "fix", "--upstream", `http://127.0.0.1:${httpUpstream.port}/mcp`]);
    expect((await gw.client.listTools()).tools.map((t) => t.name)).toEqual(["echo", "write_file", "delete_everything", "pay"]);
    const allowed: any = await gw.client.callTool({ name: "echo", arguments: { text: "over http" } });
    expect(allowed.content[0].text).toBe("echo: over http");
    like(allowed._meta.warden).toMatchObject({ decision: "ALLOWED", receipt_id: expect.stringMatching(/^rcpt_/) });
    const denied: any = await gw.client.callTool({ name: "delete_everything", arguments: {} });
    expect(denied.isError).toBe(true);
    const unknown: any = await gw.client.callTool({ name: "no_such_tool", arguments: {} });
    expect(unknown.isError).toBe(true);
    like(unknown._meta.warden).toMatchObject({ decision: "UNDECIDED", error: "unknown tool" });
    expect(httpCalls.map((c) => c.tool)).toEqual(["echo"]);
    expect(httpHeaders.length).toBeGreaterThan(0);
    for (const headers of httpHeaders) {
      expect(headers.authorization).toBeUndefined();
      expect(headers["x-api-key"]).toBeUndefined();
      expect(Object.values(headers).some((v) => v.includes(owner.apiKey))).toBe(false);
    }
  }, SLOW);
});

describe("when the host closes stdin (MCP's stdio shutdown, or a host that crashed)", () => {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  /** `warden mcp ARGS` with its stdin a pipe, initialized over it; closes stdin and says how long each process took to go. */
  async function closeStdin(args: string[], pidFile?: string) {
    const proc = Bun.spawn([process.execPath, "src/cli/main.ts", "mcp", ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", WARDEN_URL: wardenUrl, WARDEN_API_KEY: owner.apiKey, ...(pidFile ? { FIXTURE_PID: pidFile } : {}) },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    let upstreamPid: number | undefined;
    try {
      proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host", version: "1" } } }) + "\n");
      await proc.stdin.flush();
      const reader = proc.stdout.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      expect(JSON.parse(first.split("\n")[0])).toMatchObject({ id: 1, result: { serverInfo: expect.anything() } });
      if (pidFile) upstreamPid = Number(readFileSync(pidFile, "utf8"));
      if (upstreamPid !== undefined) expect(alive(upstreamPid)).toBe(true);
      const closed = performance.now();
      await proc.stdin.end();
      const exited = await Promise.race([proc.exited, Bun.sleep(8_000).then(() => "still running")]);
      const gatewayMs = performance.now() - closed;
      while (upstreamPid !== undefined && alive(upstreamPid) && performance.now() - closed < 8_000) await Bun.sleep(50);
      return { exited, gatewayMs, upstreamAlive: upstreamPid !== undefined && alive(upstreamPid) };
    } finally {
      // What the case started, by its pid, whatever happened.
      if (proc.exitCode === null) proc.kill("SIGKILL");
      if (upstreamPid !== undefined && alive(upstreamPid)) process.kill(upstreamPid, "SIGKILL");
    }
  }

  test("mcp gateway exits, and its upstream child with it", async () => {
    const pidFile = join(dir, "upstream.pid");
    const { exited, gatewayMs, upstreamAlive } = await closeStdin(["gateway", "--name", "fix", "--", process.execPath, FIXTURE], pidFile);
    expect({ exited, upstreamAlive }).toEqual({ exited: 0, upstreamAlive: false });
    expect(gatewayMs).toBeLessThan(6_000);
  }, SLOW);

  test("mcp serve exits", async () => {
    const { exited, gatewayMs } = await closeStdin(["serve"]);
    expect(exited).toBe(0);
    expect(gatewayMs).toBeLessThan(6_000);
  }, SLOW);
});

describe("mcp on the command line", () => {
  test("bad usage and a missing key exit 2 with the command's usage; help mcp", async () => {
    const none = await runCli(["mcp", "gateway"], { WARDEN_API_KEY: "k" });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("-- CMD ARGS... (stdio) or --upstream URL");
    expect(none.stderr).toContain("usage: warden mcp");
    const both = await runCli(["mcp", "gateway", "--upstream", "http://127.0.0.1:1/mcp", "--", "x"], { WARDEN_API_KEY: "k" });
    expect(both.code).toBe(2);
    const keyless = await runCli(["mcp", "gateway", "--", "x"], { WARDEN_API_KEY: undefined });
    expect({ code: keyless.code, stderr: keyless.stderr.trim() }).toEqual({ code: 2, stderr: expect.stringContaining("set WARDEN_API_KEY") });
    expect((await runCli(["mcp", "nope"])).code).toBe(2);
    // The upstream's own --help is its own: not the gateway's help.
    const theirs = await runCli(["mcp", "gateway", "--", "x", "--help"], { WARDEN_API_KEY: undefined });
    expect(theirs.stderr).toContain("set WARDEN_API_KEY");
    const help = await runCli(["help", "mcp"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("mcp gateway --upstream URL");
  }, SLOW);
});

describe("mcp serve", () => {
  // Each step bounded, so a step that hangs fails naming itself instead of the whole case.
  const tool = (client: Client, name: string, args: Record<string, unknown>): Promise<any> => client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });

  test("lists its tools; simulate, protect and execute call warden", async () => {
    const { client } = await agent(["serve"]);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["simulate", "protect", "execute", "verify", "approval_status"]);
    const simulated = await tool(client, "simulate", { input: { action: "mcp.fix.delete_everything" } });
    like(simulated.structuredContent).toMatchObject({ decision: "DENIED", reasons: ["no_rule_matched"], receipt_id: null });
    const allowed = await tool(client, "protect", { action: "mcp.fix.echo", context: { text: "hi" } });
    expect(allowed.isError).toBeFalsy();
    like(allowed.structuredContent).toMatchObject({ decision: "ALLOWED", receipt_id: expect.stringMatching(/^rcpt_/) });
    const executed = await tool(client, "execute", { receipt_id: allowed.structuredContent.receipt_id });
    like(executed.structuredContent).toMatchObject({ decision: "ALLOWED", protect_receipt_id: allowed.structuredContent.receipt_id });
    const twice = await tool(client, "execute", { receipt_id: allowed.structuredContent.receipt_id });
    expect(twice.isError).toBe(true);
    expect(twice.structuredContent.error).toBe("already_executed");
  }, SLOW);

  test("verify: a result as answered verifies, a changed one does not", async () => {
    const { client } = await agent(["serve"]);
    const allowed = await tool(client, "protect", { action: "mcp.fix.echo" });
    const verified = await tool(client, "verify", { receipt: allowed.structuredContent });
    like(verified.structuredContent).toMatchObject({ verified: true });
    const tampered = await tool(client, "verify", { receipt: { ...allowed.structuredContent, decision: "DENIED" } });
    expect(tampered.structuredContent.verified).toBe(false);
  }, SLOW);

  test("approval_status: a pending approval, with a wait; an unknown one is an error result", async () => {
    const { client } = await agent(["serve"]);
    const held = await tool(client, "protect", { action: "mcp.fix.write_file", context: { path: "/tmp/x" } });
    like(held.structuredContent).toMatchObject({ decision: "DENIED", approval: { approval_id: expect.stringMatching(/^apv_/), status: "pending" } });
    const approvalId = held.structuredContent.approval.approval_id;
    const status = await tool(client, "approval_status", { approval_id: approvalId, wait: 1 });
    like(status.structuredContent).toMatchObject({ status: "pending", protect_receipt_id: held.structuredContent.receipt_id });
    const missing = await tool(client, "approval_status", { approval_id: "apv_nope" });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent.error).toBe("not_found");
    const cancelled = await fetch(`${wardenUrl}/v1/approvals/${approvalId}/cancel`, { method: "POST", headers: { "x-api-key": owner.apiKey }, signal: AbortSignal.timeout(20_000) });
    expect(cancelled.status).toBe(200);
  }, SLOW);

  test("warden unreachable: an error result that says so", async () => {
    const { client } = await agent(["serve"], { WARDEN_URL: closedUrl });
    const result: any = await client.callTool({ name: "protect", arguments: { action: "mcp.fix.echo" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("unreachable");
  }, SLOW);
});
