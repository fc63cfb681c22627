// The checkpoint as a C2SP signed note (c2sp.org/tlog-checkpoint, c2sp.org/signed-note): its body
// and key formats from the specs, checked by Go's golang.org/x/mod/sumdb/note where `go` is
// installed (.ci/run installs golang-go and golang-golang-x-mod-dev), and by warden's own
// verifier (src/receipts/note.ts, used by `verify --proof` and the console).
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash, createPublicKey, verify } from "node:crypto";
import { verifyCheckpointNote } from "../../src/receipts/note.ts";
import { verifyProofBundle } from "../../src/receipts/proof-bundle.ts";
import { bearer, protect } from "../helpers/customer.ts";
import { call, signup, testConfig } from "../helpers/service.ts";

const GOPATH = "/usr/share/gocode";
const goNote = Bun.which("go") && existsSync(join(GOPATH, "src/golang.org/x/mod/sumdb/note/note.go"));
if (!goNote) console.warn("note.test.ts: `go` or golang-golang-x-mod-dev is not installed: the Go verifier test is skipped");

async function loggedCheckpoint(receipts = 3) {
  const a = await signup();
  for (let i = 0; i < receipts; i++) await protect(a.apiKey);
  const checkpoint = (await call("GET", "/customer/receipts/checkpoint", { headers: bearer(a.token) })).body;
  const jwks = (await call("GET", "/.well-known/jwks.json")).body as { keys: JsonWebKey[] };
  return { a, checkpoint, jwks };
}

describe("GET /customer/receipts/checkpoint: the C2SP signed note", () => {
  test("body, signature line and verifier key follow the specs, for the JWS's key and head", async () => {
    const { a, checkpoint, jwks } = await loggedCheckpoint();
    const origin = `${new URL(testConfig().publicUrl).host}/receipts/${a.tenantId}`;
    const body = `${origin}\n${checkpoint.tree_size}\n${Buffer.from(checkpoint.root_hash.slice(2), "hex").toString("base64")}\n`;
    expect(checkpoint.tree_size).toBe(4); // the signup's key.created event and 3 decisions
    expect(checkpoint.note.startsWith(body + "\n\u2014 " + origin + " ")).toBe(true);

    // Verifier key: name+hex(key id)+base64(0x01 || public key), key id from SHA-256(name \n 0x01 key).
    const [name, id] = checkpoint.note_verifier_key.split("+", 2);
    const encoded = checkpoint.note_verifier_key.slice(name.length + id.length + 2);
    expect(name).toBe(origin);
    const key = Buffer.from(encoded, "base64");
    expect(key.length).toBe(33);
    expect(key[0]).toBe(0x01);
    const publicKey = key.subarray(1);
    const kid = JSON.parse(Buffer.from(checkpoint.signature.split(".")[0], "base64url").toString()).kid;
    const jwk = jwks.keys.find((k) => (k as { kid?: string }).kid === kid)!;
    expect(Buffer.from(jwk.x!, "base64url").equals(publicKey)).toBe(true);
    const keyId = createHash("sha256").update(Buffer.concat([Buffer.from(origin + "\n"), key])).digest().subarray(0, 4);
    expect(id).toBe(keyId.toString("hex"));

    // Signature line: base64(key id || Ed25519 signature of the body).
    const line = checkpoint.note.slice(body.length + 1, -1).split(" ");
    expect(line.length).toBe(3);
    const blob = Buffer.from(line[2], "base64");
    expect(blob.subarray(0, 4).equals(keyId)).toBe(true);
    const spki = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
    expect(verify(null, Buffer.from(body), spki, blob.subarray(4))).toBe(true);
  });

  test("warden's verifier accepts the note and refuses any change to it or to the head it must match", async () => {
    const { a, checkpoint, jwks } = await loggedCheckpoint(2);
    const head = { tenant_id: a.tenantId, tree_size: checkpoint.tree_size, root_hash: checkpoint.root_hash };
    expect(await verifyCheckpointNote(checkpoint.note, jwks, head)).toBe(true);
    const tampered = checkpoint.note.replace(`\n${checkpoint.tree_size}\n`, `\n${checkpoint.tree_size + 1}\n`);
    expect(await verifyCheckpointNote(tampered, jwks, { ...head, tree_size: checkpoint.tree_size + 1 })).toBe(false);
    expect(await verifyCheckpointNote(checkpoint.note, jwks, { ...head, tree_size: checkpoint.tree_size + 1 })).toBe(false);
    expect(await verifyCheckpointNote(checkpoint.note, jwks, { ...head, root_hash: "0x" + "00".repeat(32) })).toBe(false);
    expect(await verifyCheckpointNote(checkpoint.note, jwks, { ...head, tenant_id: "cust_" + "0".repeat(22) })).toBe(false);
    expect(await verifyCheckpointNote(checkpoint.note, { keys: [] }, head)).toBe(false);
    for (const junk of [undefined, 1, "", "x\n\n— y z\n"]) expect(await verifyCheckpointNote(junk, jwks, head)).toBe(false);
  });

  test("verify --proof (and the console, which runs the same check) checks a saved checkpoint's note", async () => {
    const { a, checkpoint, jwks } = await loggedCheckpoint(2);
    const [receipt] = (await call("GET", "/customer/receipts?limit=1", { headers: bearer(a.token) })).body.receipts;
    const proof = (await call("GET", `/customer/receipts/${receipt.receipt_id}/proof?tree_size=${checkpoint.tree_size}`, { headers: bearer(a.token) })).body;
    expect((await verifyProofBundle({ receipt, proof, checkpoint }, jwks)).verified).toBe(true);
    // A bundle saved before the note existed still verifies.
    const { note: _, ...withoutNote } = checkpoint;
    expect((await verifyProofBundle({ receipt, proof, checkpoint: withoutNote }, jwks)).verified).toBe(true);
    const forged = { ...checkpoint, note: checkpoint.note.replace(`\n${checkpoint.tree_size}\n`, "\n7\n") };
    const outcome = await verifyProofBundle({ receipt, proof, checkpoint: forged }, jwks);
    expect(outcome.verified).toBe(false);
    expect(outcome.checks.checkpoint).toBe(false);
  });

  test.skipIf(!goNote)("Go's golang.org/x/mod/sumdb/note opens the note with note_verifier_key alone", async () => {
    const { checkpoint } = await loggedCheckpoint(5);
    const run = (key: string, note: string) => {
      const go = Bun.spawnSync(["go", "run", join(import.meta.dir, "..", "go", "verify-note.go"), key], {
        stdin: Buffer.from(note),
        // Offline, from the Debian package's GOPATH: no module proxy, no go.mod.
        env: { ...process.env, GO111MODULE: "off", GOPATH, GOFLAGS: "", GOPROXY: "off", GOCACHE: process.env.GOCACHE ?? mkdtempSync(join(tmpdir(), "warden-gocache-")) },
      });
      return { code: go.exitCode, out: go.stdout.toString() + go.stderr.toString() };
    };
    const ok = run(checkpoint.note_verifier_key, checkpoint.note);
    expect(ok).toEqual({ code: 0, out: checkpoint.note.slice(0, checkpoint.note.indexOf("\n\n") + 1) });
    const forged = run(checkpoint.note_verifier_key, checkpoint.note.replace(`\n${checkpoint.tree_size}\n`, `\n${checkpoint.tree_size + 1}\n`));
    expect(forged.code).toBe(1);
  }, 240_000);
});

