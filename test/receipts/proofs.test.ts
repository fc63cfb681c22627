// The receipt log as an RFC 9162 Merkle tree: checkpoints, inclusion and consistency proofs.
// Everything the service returns is checked here by an independent verifier written from the
// RFC's recursive definitions (node:crypto only; nothing from src/receipts/merkle.ts), and the
// server's own Merkle module is checked against it and against the Certificate Transparency
// test vectors.
import { beforeAll, describe, expect, test } from "bun:test";
import canonicalizeReference from "canonicalize";
import { createHash, createPublicKey, verify as verifySignature } from "node:crypto";
import { consistencyProof, inclusionProof, leafHash, rootHash, verifyConsistency, verifyInclusion } from "../../src/receipts/merkle.ts";
import { bearer, execute, LARGE_PAYMENT, protect, SMALL_PAYMENT } from "../helpers/customer.ts";
import { call, expectErrorShape, signup } from "../helpers/service.ts";

// ---- The independent RFC 9162 verifier ------------------------------------------------------

const sha = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();
const refLeaf = (entry: Buffer) => sha(Buffer.from([0x00]), entry);
const refNode = (l: Buffer, r: Buffer) => sha(Buffer.from([0x01]), l, r);
/** k: the largest power of two smaller than n. */
const refSplit = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);
const hex = (b: Buffer | Uint8Array) => "0x" + Buffer.from(b).toString("hex");
const unhex = (h: string) => Buffer.from(h.slice(2), "hex");

function refRoot(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0];
  const k = refSplit(leaves.length);
  return refNode(refRoot(leaves.slice(0, k)), refRoot(leaves.slice(k)));
}

/** The root that PATH(m, D[n]) leads to from `leaf`, rebuilt along the definition; null if malformed. */
function refInclusionRoot(m: number, n: number, leaf: Buffer, path: Buffer[]): Buffer | null {
  if (n === 1) return path.length === 0 && m === 0 ? leaf : null;
  if (path.length === 0 || m < 0 || m >= n) return null;
  const k = refSplit(n);
  const sibling = path[path.length - 1];
  const rest = path.slice(0, -1);
  if (m < k) {
    const left = refInclusionRoot(m, k, leaf, rest);
    return left && refNode(left, sibling);
  }
  const right = refInclusionRoot(m - k, n - k, leaf, rest);
  return right && refNode(sibling, right);
}

function refVerifyInclusion(m: number, n: number, leaf: Buffer, path: Buffer[], root: Buffer): boolean {
  const rebuilt = refInclusionRoot(m, n, leaf, path);
  return rebuilt !== null && rebuilt.equals(root);
}

/** [old root, new root] that SUBPROOF(m, D[n], b) leads to; null if malformed. */
function refSubproofRoots(m: number, n: number, whole: boolean, path: Buffer[], oldRoot: Buffer): [Buffer, Buffer] | null {
  if (m === n) {
    if (whole) return path.length === 0 ? [oldRoot, oldRoot] : null;
    return path.length === 1 ? [path[0], path[0]] : null;
  }
  if (path.length === 0) return null;
  const k = refSplit(n);
  const last = path[path.length - 1];
  const rest = path.slice(0, -1);
  if (m <= k) {
    const inner = refSubproofRoots(m, k, whole, rest, oldRoot);
    return inner && [inner[0], refNode(inner[1], last)];
  }
  const inner = refSubproofRoots(m - k, n - k, false, rest, oldRoot);
  return inner && [refNode(last, inner[0]), refNode(last, inner[1])];
}

function refVerifyConsistency(m: number, n: number, oldRoot: Buffer, newRoot: Buffer, path: Buffer[]): boolean {
  if (m < 1 || m > n) return false;
  const roots = refSubproofRoots(m, n, true, path, oldRoot);
  return roots !== null && roots[0].equals(oldRoot) && roots[1].equals(newRoot);
}

/** A compact EdDSA JWS over the exact JCS bytes of `claims`, checked with node:crypto against the JWKS. */
function refVerifyJws(jws: string, jwks: { keys: { kid: string; x: string }[] }, claims: unknown): boolean {
  const [h, p, s] = jws.split(".");
  const header = JSON.parse(Buffer.from(h, "base64url").toString("utf8"));
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (header.alg !== "EdDSA" || !jwk) return false;
  if (Buffer.from(p, "base64url").toString("utf8") !== canonicalizeReference(claims)) return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" });
  return verifySignature(null, Buffer.from(`${h}.${p}`), key, Buffer.from(s, "base64url"));
}

// ---- The server's Merkle module against the reference --------------------------------------

// Certificate Transparency's test data (RFC 6962 and RFC 9162 hash trees alike).
const CT_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"].map((h) => Buffer.from(h, "hex"));
const CT_ROOTS = [
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];
const H = {
  a: "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
  b: "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
  c: "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
  d: "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
  e: "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
  f: "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  g: "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
};
const toHex = (list: Uint8Array[]) => list.map((b) => Buffer.from(b).toString("hex"));

describe("src/receipts/merkle.ts", () => {
  const leaves = CT_LEAVES.map((l) => leafHash(l));

  test("matches the Certificate Transparency vectors: roots, inclusion and consistency proofs", () => {
    expect(hex(rootHash([]))).toBe(hex(sha()));
    for (let n = 1; n <= 8; n++) expect(Buffer.from(rootHash(leaves.slice(0, n))).toString("hex")).toBe(CT_ROOTS[n - 1]);
    expect(toHex(inclusionProof(leaves, 0, 8))).toEqual([H.a, H.b, H.c]);
    expect(toHex(inclusionProof(leaves, 5, 8))).toEqual([H.g, H.e, H.f]);
    expect(toHex(consistencyProof(leaves, 1, 8))).toEqual([H.a, H.b, H.c]);
    expect(toHex(consistencyProof(leaves, 6, 8))).toEqual([H.d, H.e, H.f]);
    expect(toHex(consistencyProof(leaves, 2, 5))).toEqual([H.b, H.g]);
  });

  test("every inclusion and consistency proof of trees up to 40 leaves passes both verifiers", () => {
    const entries = Array.from({ length: 40 }, (_, i) => createHash("sha256").update(`entry ${i}`).digest());
    const mine = entries.map((e) => leafHash(e));
    const ref = entries.map(refLeaf);
    for (let n = 1; n <= 40; n++) {
      const root = refRoot(ref.slice(0, n));
      expect(hex(rootHash(mine.slice(0, n)))).toBe(hex(root));
      for (let m = 0; m < n; m++) {
        const path = inclusionProof(mine, m, n);
        expect(refVerifyInclusion(m, n, ref[m], path.map((p) => Buffer.from(p)), root)).toBe(true);
        expect(verifyInclusion(m, n, mine[m], path, root)).toBe(true);
      }
      for (let m = 1; m <= n; m++) {
        const path = consistencyProof(mine, m, n);
        const oldRoot = refRoot(ref.slice(0, m));
        expect(refVerifyConsistency(m, n, oldRoot, root, path.map((p) => Buffer.from(p)))).toBe(true);
        expect(verifyConsistency(m, n, oldRoot, root, path)).toBe(true);
      }
    }
  });

  test("the module's verifiers refuse what the reference refuses", () => {
    const entries = Array.from({ length: 13 }, (_, i) => Buffer.from([i]));
    const mine = entries.map((e) => leafHash(e));
    const root = Buffer.from(rootHash(mine));
    const path = inclusionProof(mine, 6, 13).map((p) => Buffer.from(p));
    const bad = Buffer.alloc(32, 7);
    const leaf6 = Buffer.from(mine[6]);
    const inclusionCases: [number, number, Buffer, Buffer[], Buffer][] = [
      [5, 13, leaf6, path, root],
      [13, 13, leaf6, path, root],
      [-1, 13, leaf6, path, root],
      [6, 13, Buffer.from(mine[7]), path, root],
      [6, 13, leaf6, [...path, bad], root],
      [6, 13, leaf6, path.slice(1), root],
      [6, 13, leaf6, [bad, ...path.slice(1)], root],
      [6, 13, leaf6, path, bad],
    ];
    for (const [m, n, leaf, p, r] of inclusionCases) {
      expect(refVerifyInclusion(m, n, leaf, p, r)).toBe(false);
      expect(verifyInclusion(m, n, leaf, p, r)).toBe(false);
    }
    // The same path also proves leaf 6 in trees of 12 and 14, where the shape is the same: a proof is
    // tied to its size by the root, which the signed checkpoint binds to tree_size.
    for (const n of [12, 14]) expect(verifyInclusion(6, n, leaf6, path, root)).toBe(refVerifyInclusion(6, n, leaf6, path, root));

    const cpath = consistencyProof(mine, 5, 13).map((p) => Buffer.from(p));
    const oldRoot = Buffer.from(rootHash(mine.slice(0, 5)));
    expect(verifyConsistency(5, 13, oldRoot, root, cpath)).toBe(true);
    const consistencyCases: [number, number, Buffer, Buffer, Buffer[]][] = [
      [4, 13, oldRoot, root, cpath],
      [6, 13, oldRoot, root, cpath],
      [5, 13, bad, root, cpath],
      [5, 13, oldRoot, bad, cpath],
      [5, 13, oldRoot, root, []],
      [5, 13, oldRoot, root, [...cpath, bad]],
      [5, 13, oldRoot, root, cpath.slice(1)],
      [0, 13, oldRoot, root, cpath],
      [14, 13, oldRoot, root, cpath],
      [13, 13, root, root, [bad]],
    ];
    for (const [m, n, o, r, p] of consistencyCases) {
      expect(refVerifyConsistency(m, n, o, r, p)).toBe(false);
      expect(verifyConsistency(m, n, o, r, p)).toBe(false);
    }
    expect(verifyConsistency(13, 13, root, root, [])).toBe(true);
  });
});

// ---- The service's proofs, checked by the reference only -----------------------------------

describe("checkpoint and proofs over HTTP", () => {
  // Past 32 leaves: subtrees of 16 or more are read from the stored tree, smaller ones folded from receipts.
  // N leaves: the signup's key.created event (seq 0), then N - 1 decisions.
  const N = 36;
  let a: Awaited<ReturnType<typeof signup>>;
  let receipts: {
    receipt_id: string; seq: number; chain_hash: string; prev_hash: string | null; content_hash: string; request_id: string; timestamp: string;
    key_id: string; kind: string; protect_receipt_id: string | null;
  }[];
  let jwks: { keys: { kid: string; x: string }[] };
  const get = (path: string, token = a.token) => call("GET", path, { headers: bearer(token) });

  beforeAll(async () => {
    a = await signup();
    for (let i = 0; i < N - 1; i++) {
      if (i % 4 === 3) await execute(a.apiKey, receipts_last_allowed!);
      else {
        const r = await protect(a.apiKey, i % 5 === 4 ? LARGE_PAYMENT : SMALL_PAYMENT, { headers: { "x-request-id": `proof-${i}` } });
        if (r.body.decision === "ALLOWED") receipts_last_allowed = r.body.receipt_id;
      }
    }
    receipts = (await get("/customer/receipts?limit=100")).body.receipts.reverse();
    jwks = (await call("GET", "/.well-known/jwks.json")).body;
  });
  let receipts_last_allowed: string | undefined;

  const leavesUpTo = (n: number) => receipts.slice(0, n).map((r) => refLeaf(unhex(r.chain_hash)));

  test("each chain_hash is SHA-256 of JCS of the signed claims plus prev and seq", () => {
    expect(receipts.map((r) => r.seq)).toEqual(Array.from({ length: N }, (_, i) => i));
    let prev: string | null = null;
    for (const r of receipts) {
      expect(r.prev_hash).toBe(prev);
      const link = {
        v: 2, receipt_id: r.receipt_id, tenant_id: a.tenantId, key_id: r.key_id, kind: r.kind, request_id: r.request_id,
        timestamp: r.timestamp, content_hash: r.content_hash, protect_receipt_id: r.protect_receipt_id, prev, seq: r.seq,
      };
      const expected = "0x" + createHash("sha256").update(canonicalizeReference(link) as string).digest("hex");
      expect(r.chain_hash).toBe(expected);
      prev = r.chain_hash;
    }
  });

  test("GET /customer/receipts/checkpoint: the root of all leaves, signed over JCS {tenant_id, tree_size, root_hash, timestamp}", async () => {
    const reply = await get("/customer/receipts/checkpoint");
    expect(reply.status).toBe(200);
    const { ok, tenant_id, tree_size, root_hash, timestamp, signature } = reply.body;
    expect({ ok, tenant_id, tree_size }).toEqual({ ok: true, tenant_id: a.tenantId, tree_size: N });
    expect(root_hash).toBe(hex(refRoot(leavesUpTo(N))));
    expect(timestamp).toMatch(/Z$/);
    expect(refVerifyJws(signature, jwks, { tenant_id: a.tenantId, tree_size: N, root_hash, timestamp })).toBe(true);
    expect(refVerifyJws(signature, jwks, { tenant_id: a.tenantId, tree_size: N - 1, root_hash, timestamp })).toBe(false);
  });

  test("a new tenant's log holds one leaf, its signup's key.created event, and its root is that leaf", async () => {
    const b = await signup();
    const reply = await get("/customer/receipts/checkpoint", b.token);
    const [event] = (await get("/customer/receipts", b.token)).body.receipts;
    expect(event).toMatchObject({ seq: 0, kind: "event", payload: { event: "key.created" } });
    const root = hex(refRoot([refLeaf(unhex(event.chain_hash))]));
    expect(root).not.toBe(hex(sha()));
    expect(reply.body).toMatchObject({ tree_size: 1, root_hash: root });
    expect(refVerifyJws(reply.body.signature, jwks, { tenant_id: b.tenantId, tree_size: 1, root_hash: root, timestamp: reply.body.timestamp })).toBe(true);
  });

  test("every inclusion proof, for every tree size that holds the receipt, passes the reference verifier", async () => {
    for (const r of receipts) {
      for (let size = r.seq + 1; size <= N; size++) {
        const query = size === N && r.seq % 2 === 0 ? "" : `?tree_size=${size}`;
        const reply = await get(`/customer/receipts/${r.receipt_id}/proof${query}`);
        expect(reply.status).toBe(200);
        expect(reply.body).toMatchObject({ ok: true, receipt_id: r.receipt_id, seq: r.seq, tree_size: size });
        const leaf = refLeaf(unhex(r.chain_hash));
        expect(reply.body.leaf_hash).toBe(hex(leaf));
        expect(refVerifyInclusion(r.seq, size, leaf, reply.body.path.map(unhex), refRoot(leavesUpTo(size)))).toBe(true);
      }
    }
  });

  test("every consistency proof between two sizes passes the reference verifier", async () => {
    for (let to = 1; to <= N; to++) {
      for (let from = 1; from <= to; from++) {
        const reply = await get(`/customer/receipts/consistency?from=${from}${to === N && from % 3 === 0 ? "" : `&to=${to}`}`);
        expect(reply.status).toBe(200);
        expect(reply.body).toMatchObject({ ok: true, from, to });
        expect(refVerifyConsistency(from, to, refRoot(leavesUpTo(from)), refRoot(leavesUpTo(to)), reply.body.path.map(unhex))).toBe(true);
      }
    }
  });

  test("an old checkpoint stays consistent with a newer one after more appends", async () => {
    const before = (await get("/customer/receipts/checkpoint")).body;
    await protect(a.apiKey, SMALL_PAYMENT);
    await protect(a.apiKey, LARGE_PAYMENT);
    const after = (await get("/customer/receipts/checkpoint")).body;
    expect(after.tree_size).toBe(before.tree_size + 2);
    const proof = (await get(`/customer/receipts/consistency?from=${before.tree_size}&to=${after.tree_size}`)).body;
    expect(refVerifyConsistency(before.tree_size, after.tree_size, unhex(before.root_hash), unhex(after.root_hash), proof.path.map(unhex))).toBe(true);
    expect(refVerifyConsistency(before.tree_size, after.tree_size, unhex(after.root_hash), unhex(after.root_hash), proof.path.map(unhex))).toBe(false);
  });

  test("bad sizes are 400 invalid_request; another tenant's or an unknown receipt is 404", async () => {
    const b = await signup();
    const r = receipts[5];
    for (const q of ["tree_size=0", "tree_size=5", "tree_size=1000", "tree_size=1.5", "tree_size=x", "size=3"]) {
      expectErrorShape(await get(`/customer/receipts/${r.receipt_id}/proof?${q}`), 400, "invalid_request");
    }
    for (const q of ["", "from=0", "from=5&to=4", "from=1&to=1000", "from=a", "from=1&to=2&x=1"]) {
      expectErrorShape(await get(`/customer/receipts/consistency?${q}`), 400, "invalid_request");
    }
    expectErrorShape(await get(`/customer/receipts/${r.receipt_id}/proof`, b.token), 404, "not_found");
    expectErrorShape(await get(`/customer/receipts/rcpt_${"0".repeat(22)}/proof`), 404, "not_found");
    // b's log holds one leaf (its signup's event): a size past it is refused.
    expectErrorShape(await get("/customer/receipts/consistency?from=2", b.token), 400, "invalid_request");
  });
});
