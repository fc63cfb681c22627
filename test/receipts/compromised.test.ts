// A signing key revoked as compromised (warden ops signing-key revoke, sql/ops/signing_key_revoke.sql):
// the JWKS marks it, every verifier refuses its signatures from compromised_since on and accepts
// earlier ones, and the service stops signing with it.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runOpsScript } from "../../src/ops/scripts.ts";
import { generateSigningKey } from "../../src/crypto/signature.ts";
import { DbError } from "../../src/db/index.ts";
import { checkReceiptLog } from "../../src/receipts/check.ts";
import { verifyProofBundle } from "../../src/receipts/proof-bundle.ts";
import { verifyResult } from "../../src/receipts/verify.ts";
import { signingKid } from "../helpers/claims.ts";
import { apiKey, bearer, protect } from "../helpers/customer.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { refusedConstraint, testQuery } from "../helpers/sql.ts";

const ROOT = join(import.meta.dir, "..", "..");
const revoke = async (kid: string, compromised_since: string) => {
  const { db } = await testService();
  return runOpsScript<{ kid: string; status: string; retired_at: string; compromised_since: string }>(db, "ops/signing_key_revoke", { kid, compromised_since });
};
const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(DbError);
  return (err as DbError).sqlstate;
};
const jwks = async () => (await call("GET", "/.well-known/jwks.json")).body as { keys: (JsonWebKey & { kid: string; compromised_since?: string })[] };

async function cliVerify(args: string[]) {
  const child = Bun.spawn([process.execPath, "src/cli/main.ts", "verify", ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: undefined, WARDEN_URL: "https://127.0.0.1:1", LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  return { code, json: JSON.parse(stdout) };
}

describe("signing_key_revoke", () => {
  test("refuses an unknown key (WR008) and a time in the future (WR009); a mark only moves earlier", async () => {
    const { db } = await testService();
    const key = await generateSigningKey();
    await testQuery(db, "signing_key_insert_retired", [key.kid, key.publicJwk]);
    expect(await refusal(revoke("no-such-kid", new Date().toISOString()))).toBe("WR008");
    expect(await refusal(revoke(key.kid, new Date(Date.now() + 60_000).toISOString()))).toBe("WR009");

    const first = "2025-03-01T10:00:00.250Z";
    expect(await revoke(key.kid, first)).toEqual([{ kid: key.kid, status: "retired", retired_at: expect.any(String), compromised_since: first }]);
    // Run again, or with a later time: the earlier mark stays. An earlier time moves it.
    expect((await revoke(key.kid, first))[0].compromised_since).toBe(first);
    expect((await revoke(key.kid, "2025-04-01T00:00:00.000Z"))[0].compromised_since).toBe(first);
    expect((await revoke(key.kid, "2025-02-01T00:00:00.000+01:00"))[0].compromised_since).toBe("2025-01-31T23:00:00.000Z");

    // Around the procedure too: the mark is never lifted or moved later, and a marked key is never active.
    expect(await refusal(testQuery(db, "signing_key_set", [key.kid, "retired", null, new Date().toISOString()]))).toBe("WR009");
    expect(await refusal(testQuery(db, "signing_key_set", [key.kid, "retired", "2025-05-01T00:00:00Z", new Date().toISOString()]))).toBe("WR009");
    const active = await testQuery(db, "signing_key_set", [key.kid, "active", "2025-01-01T00:00:00Z", new Date().toISOString()]).then(() => undefined, (e: DbError) => e);
    expect([active?.sqlstate, refusedConstraint(active)]).toEqual(["23514", "signing_keys_compromised_not_active"]);
    const published = (await jwks()).keys.find((k) => k.kid === key.kid);
    expect(published?.compromised_since).toBe("2025-01-31T23:00:00.000Z");
  });
});

describe("revoking the active key as compromised", () => {
  test("the JWKS marks it; every verifier refuses its signatures from then on, accepts earlier ones; the service signs with a new key", async () => {
    const { service, db } = await testService();
    const a = await signup();
    const get = async (path: string) => (await call("GET", path, { headers: bearer(a.token) })).body;
    const verify = async (receipt: unknown) => (await call("POST", "/v1/verify", { json: { receipt }, headers: apiKey(a.apiKey) })).body;

    const before = (await protect(a.apiKey)).body;
    const kid = signingKid(before.signature);
    await Bun.sleep(5);
    const since = new Date().toISOString();
    await Bun.sleep(5);
    // Signed by the same key after the compromise began (say, by whoever stole it).
    const after = (await protect(a.apiKey)).body;
    const simulated = (await call("POST", "/v1/simulate", { json: { preset: "small_payment" }, headers: apiKey(a.apiKey) })).body;
    const staleCheckpoint = await get("/customer/receipts/checkpoint");
    expect([signingKid(after.signature), signingKid(simulated.signature), signingKid(staleCheckpoint.signature)]).toEqual([kid, kid, kid]);
    const unmarked = await jwks();
    for (const r of [before, after, simulated]) expect((await verifyResult(r, unmarked)).verified).toBe(true);

    expect(await revoke(kid, since)).toEqual([{ kid, status: "retired", retired_at: expect.any(String), compromised_since: since }]);

    // The JWKS publishes the mark on that key only.
    const marked = await jwks();
    expect(marked.keys.find((k) => k.kid === kid)?.compromised_since).toBe(since);
    // Offline (warden verify, the bot example's check) and the server.
    expect((await verifyResult(before, marked)).verified).toBe(true);
    expect((await verifyResult(after, marked)).checks).toEqual({ content_hash: true, signature: false });
    expect((await verifyResult(simulated, marked)).checks).toEqual({ content_hash: true, signature: false });
    expect((await verify(before)).verified).toBe(true);
    expect(await verify(after)).toMatchObject({ verified: false, checks: { content_hash: true, signature: false, stored: true } });
    expect((await verify(simulated)).verified).toBe(false);

    // The service stops signing with it: at its next key load (at most a minute) it makes a new active key.
    await service.deps.signer.reload();
    const next = (await protect(a.apiKey)).body;
    expect(signingKid(next.signature)).not.toBe(kid);
    expect((await verify(next)).verified).toBe(true);
    const rows = await db.query("receipts/signing_keys");
    expect(rows.filter((r) => r.status === "active").map((r) => r.kid)).toEqual([signingKid(next.signature)]);

    // verify --proof and the console's check (one function): the receipt, and the checkpoint's own signature.
    const fresh = await get("/customer/receipts/checkpoint");
    const bundle = async (receipt: { receipt_id: string }, checkpoint: { tree_size: number }) => ({
      receipt: (await get(`/customer/receipts/${receipt.receipt_id}`)).receipt,
      proof: await get(`/customer/receipts/${receipt.receipt_id}/proof?tree_size=${checkpoint.tree_size}`),
      checkpoint,
    });
    const keys = await jwks();
    expect((await verifyProofBundle(await bundle(before, fresh), keys)).verified).toBe(true);
    expect((await verifyProofBundle(await bundle(after, fresh), keys)).checks).toMatchObject({ signature: false, chain_hash: true, inclusion: true, checkpoint: true });
    expect((await verifyProofBundle(await bundle(before, staleCheckpoint), keys)).checks).toMatchObject({ signature: true, inclusion: true, checkpoint: false });

    // ops receipts check reports the receipt signed after the mark, and only that one.
    const log = await checkReceiptLog(db, a.tenantId);
    expect(log!.problems.map((p) => [p.seq, p.problem])).toEqual([[after.seq, `signed by key ${kid}, compromised at or before this receipt's time`]]);

    // The CLI, fully offline with the JWKS saved: exit 0 for the earlier result, 1 for the later one.
    const dir = mkdtempSync(join(tmpdir(), "warden-compromised-"));
    const save = (name: string, value: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(value));
      return path;
    };
    const jwksFile = save("jwks.json", keys);
    expect((await cliVerify([save("before.json", before), "--jwks", jwksFile])).code).toBe(0);
    const refused = await cliVerify([save("after.json", after), "--jwks", jwksFile]);
    expect([refused.code, refused.json.checks]).toEqual([1, { content_hash: true, signature: false }]);
    const proofRefused = await cliVerify(["--proof", save("after-bundle.json", await bundle(after, fresh)), "--jwks", jwksFile]);
    expect([proofRefused.code, proofRefused.json.checks.signature]).toEqual([1, false]);
  }, 120_000);
});
