// `warden verify --proof` (offline, only the JWKS) and `warden ops receipts check TENANT`, run as a
// user runs them: the CLI as a child process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb, type Db } from "../../src/db/index.ts";
import { createService } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { checkReceiptLog } from "../../src/receipts/check.ts";
import { verifyProofBundle } from "../../src/receipts/proof-bundle.ts";
import { claimTampered } from "../helpers/claims.ts";
import { bearer, execute, LARGE_PAYMENT, protect } from "../helpers/customer.ts";
import { call, signup, testConfig, testService } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";
import { runCli } from "../helpers/cli.ts";

/** Rewrites a stored receipt's request_id with the append-only guard off for that one statement. */
async function forgeRequestId(db: Db, receiptId: string): Promise<void> {
  await testQuery(db, "receipts_guard_off");
  try {
    await testQuery(db, "receipt_forge_request_id", [receiptId, "forged"]);
  } finally {
    await testQuery(db, "receipts_guard_on");
  }
}

const SLOW = 60_000;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "warden-receipts-cli-"));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The command offline: no database, no reachable service (test/helpers/cli.ts). */
function cli(args: string[], env: Record<string, string | undefined> = {}) {
  return runCli(args, { DATABASE_URL: undefined, WARDEN_URL: "https://127.0.0.1:1", LOG_LEVEL: "silent", ...env });
}

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

/** A tenant with a few receipts, and a proof bundle for one of them at the current checkpoint. */
async function bundleFor() {
  const a = await signup();
  const first = (await protect(a.apiKey)).body;
  await protect(a.apiKey, LARGE_PAYMENT);
  await execute(a.apiKey, first.receipt_id);
  await protect(a.apiKey);
  const get = async (path: string) => (await call("GET", path, { headers: bearer(a.token) })).body;
  const checkpoint = await get("/customer/receipts/checkpoint");
  const receipt = await get(`/customer/receipts/${first.receipt_id}`);
  const proof = await get(`/customer/receipts/${first.receipt_id}/proof?tree_size=${checkpoint.tree_size}`);
  const jwks = (await call("GET", "/.well-known/jwks.json")).body;
  return { a, bundle: { receipt: receipt.receipt, proof, checkpoint }, wrapped: { receipt, proof, checkpoint }, jwks, get };
}

describe("verify --proof", () => {
  test("checks the receipt, its chain_hash, its inclusion and the signed checkpoint offline", async () => {
    const { bundle, wrapped, jwks } = await bundleFor();
    const jwksFile = file("jwks.json", jwks);
    const good = await cli(["verify", "--proof", file("bundle.json", bundle), "--jwks", jwksFile]);
    expect(good.code).toBe(0);
    expect(good.json).toEqual({ ok: true, verified: true, checks: { content_hash: true, signature: true, chain_hash: true, inclusion: true, checkpoint: true } });
    // The body of GET /customer/receipts/{id} as is also works.
    expect((await cli(["verify", "--proof", file("wrapped.json", wrapped), "--jwks", jwksFile])).code).toBe(0);

    const forged = { ...bundle, receipt: { ...bundle.receipt, request_id: "someone-else" } };
    const bad = await cli(["verify", "--proof", file("forged.json", forged), "--jwks", jwksFile]);
    expect(bad.code).toBe(1);
    expect(bad.json).toMatchObject({ ok: false, verified: false, error: "proof_mismatch", checks: { content_hash: true, signature: false, chain_hash: false, checkpoint: true } });

    expect((await cli(["verify", "--proof", file("x.json", bundle), "other.json"])).code).toBe(2);
    // The receipt alone, as GET /customer/receipts/{id} answers it, is a result that verify checks.
    const single = await cli(["verify", file("receipt.json", wrapped.receipt), "--jwks", jwksFile]);
    expect({ code: single.code, json: single.json }).toEqual({ code: 0, json: { ok: true, verified: true, checks: { content_hash: true, signature: true } } });
  }, SLOW);

  test("what is not a bundle is named, exit 2, not proof_mismatch", async () => {
    const { bundle, jwks } = await bundleFor();
    const jwksFile = file("named-jwks.json", jwks);
    const cases: [string, string, string][] = [
      ["garbage.json", "{not json", "garbage.json is not JSON"],
      ["empty.json", "", "empty.json is empty"],
      ["error.json", JSON.stringify({ ok: false, error: "unauthorized", message: "Invalid session token.", request_id: "req_1" }), "error.json is not a proof bundle but an error the service answered: unauthorized: Invalid session token. (request_id req_1)"],
      ["result.json", JSON.stringify(bundle.receipt), "result.json is not a proof bundle but a single result"],
      ["other.json", JSON.stringify({ receipt: bundle.receipt, proof: bundle.proof }), "other.json is not a proof bundle {receipt, proof, checkpoint}: it has no checkpoint"],
      ["list.json", "[]", "list.json is not a proof bundle: it is JSON array"],
    ];
    for (const [name, text, message] of cases) {
      const run = await cli(["verify", "--proof", file(name, text), "--jwks", jwksFile]);
      expect({ name, code: run.code, stdout: run.stdout, stderr: run.stderr }).toEqual({ name, code: 2, stdout: "", stderr: expect.stringContaining(`error: ${join(dir, message)}`) });
    }
  }, SLOW);

  test("each part of a bundle is checked (in process)", async () => {
    const { a, bundle, jwks, get } = await bundleFor();
    const ok = await verifyProofBundle(bundle, jwks);
    expect(ok.verified).toBe(true);
    const cases: [unknown, string][] = [
      [{ ...bundle, checkpoint: { ...bundle.checkpoint, root_hash: "0x" + "00".repeat(32) } }, "inclusion"],
      [{ ...bundle, proof: { ...bundle.proof, tree_size: bundle.proof.tree_size - 1 } }, "inclusion"],
      [{ ...bundle, proof: { ...bundle.proof, path: bundle.proof.path.slice(1) } }, "inclusion"],
      [{ ...bundle, checkpoint: { ...bundle.checkpoint, timestamp: new Date(0).toISOString() } }, "checkpoint"],
      [{ ...bundle, receipt: { ...bundle.receipt, prev_hash: "0x" + "11".repeat(32) } }, "chain_hash"],
      [{ ...bundle, receipt: { ...bundle.receipt, decision: "DENIED" } }, "content_hash"],
    ];
    for (const [candidate, failing] of cases) {
      const result = await verifyProofBundle(candidate, jwks);
      expect(result.verified).toBe(false);
      expect(result.checks[failing as keyof typeof result.checks]).toBe(false);
    }
    // Another tenant's checkpoint does not vouch for this receipt.
    const b = await signup();
    await protect(b.apiKey);
    const theirs = (await call("GET", "/customer/receipts/checkpoint", { headers: bearer(b.token) })).body;
    expect((await verifyProofBundle({ ...bundle, checkpoint: theirs }, jwks)).checks.checkpoint).toBe(false);
    // A later checkpoint with a proof for its size verifies as well.
    await protect(a.apiKey);
    const later = await get("/customer/receipts/checkpoint");
    const proof = await get(`/customer/receipts/${bundle.receipt.receipt_id}/proof?tree_size=${later.tree_size}`);
    expect((await verifyProofBundle({ receipt: bundle.receipt, proof, checkpoint: later }, jwks)).verified).toBe(true);
    for (const junk of [null, 1, "x", [], {}, { receipt: {}, proof: {}, checkpoint: {} }]) {
      expect((await verifyProofBundle(junk, jwks)).verified).toBe(false);
    }
  });
});

describe("verify --proof: every signed claim", () => {
  test("changing any one claim of the bundle's receipt fails the check (in process, and the CLI for two of them)", async () => {
    const { bundle, jwks } = await bundleFor();
    for (const [claim, receipt] of claimTampered(bundle.receipt)) {
      const { verified, checks } = await verifyProofBundle({ ...bundle, receipt }, jwks);
      expect({ claim, verified, signature: checks.signature, chain_hash: checks.chain_hash }).toEqual({ claim, verified: false, signature: false, chain_hash: false });
    }
    const jwksFile = file("claims-jwks.json", jwks);
    for (const [claim, receipt] of claimTampered(bundle.receipt).filter(([c]) => c === "key_id" || c === "receipt_id")) {
      const run = await cli(["verify", "--proof", file(`claim-${claim}.json`, { ...bundle, receipt }), "--jwks", jwksFile]);
      expect({ claim, code: run.code, error: run.json?.error }).toEqual({ claim, code: 1, error: "proof_mismatch" });
    }
  }, SLOW);
});

describe("checkReceiptLog (what ops receipts check runs)", () => {
  test("an intact log passes; a forged receipt is reported with the checks it breaks", async () => {
    const { a } = await bundleFor();
    const { db } = await testService();
    const intact = await checkReceiptLog(db, a.tenantId);
    // The signup's key.created event and 4 decisions: every leaf of the checkpoint.
    expect(intact).toMatchObject({ ok: true, tenant_id: a.tenantId, receipts: 5, problems: [] });
    const head = (await call("GET", "/customer/receipts/checkpoint", { headers: bearer(a.token) })).body;
    expect([intact!.receipts, intact!.root_hash]).toEqual([head.tree_size, head.root_hash]);

    const [victim] = (await call("GET", "/customer/receipts?limit=1", { headers: bearer(a.token) })).body.receipts;
    await forgeRequestId(db, victim.receipt_id);
    const broken = await checkReceiptLog(db, a.tenantId);
    expect(broken!.ok).toBe(false);
    expect(broken!.problems.map((p) => p.problem).sort()).toEqual(["chain_hash does not match", "signature does not verify"]);
    expect(broken!.problems[0].seq).toBe(victim.seq);
    expect(await checkReceiptLog(db, "cust_" + "0".repeat(22))).toBeUndefined();
  });
});

describe("ops receipts check TENANT", () => {
  test("exit 0 on an intact chain, 1 on a break or an unknown tenant, 2 on bad usage", async () => {
    // Its own database: an embedded one in a folder no service holds, or the test server.
    const dataDir = join(dir, "data");
    const env = { DATA_DIR: dataDir, DATABASE_URL: process.env.TEST_DATABASE_URL };
    const open = () => openDb({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir });
    let db = await open();
    const service = await createService(testConfig(), { db, log: createLogger("silent") });
    const a = await call("POST", "/auth/signup", { json: { email: `ops.${Date.now()}@example.com`, password: "correct horse battery staple" }, service });
    for (let i = 0; i < 3; i++) await protect(a.body.api_key, undefined, { service });
    const [victim] = (await call("GET", "/customer/receipts?limit=1", { headers: bearer(a.body.token), service })).body.receipts;
    await service.close();
    await db.close();

    const intact = await cli(["ops", "receipts", "check", a.body.tenant_id], env);
    expect(intact.code).toBe(0);
    expect(intact.json).toMatchObject({ ok: true, tenant_id: a.body.tenant_id, receipts: 4, problems: [] }); // the signup's event and 3 decisions

    db = await open();
    await forgeRequestId(db, victim.receipt_id);
    await db.close();
    const broken = await cli(["ops", "receipts", "check", a.body.tenant_id], env);
    expect(broken.code).toBe(1);
    expect(broken.json.ok).toBe(false);
    expect(broken.json.problems.length).toBeGreaterThan(0);

    const unknown = await cli(["ops", "receipts", "check", "cust_" + "0".repeat(22)], env);
    expect(unknown.code).toBe(1);
    expect(unknown.json.error).toBe("unknown_tenant");
    expect((await cli(["ops", "receipts", "check"], env)).code).toBe(2);
  }, SLOW);
});
