// GET /customer/log/tile/...: the tenant's log in the C2SP tlog-tiles layout. The tiles'
// bytes are checked against the receipts' chain hashes with node:crypto only, and Go's
// golang.org/x/mod/sumdb/tlog (where `go` is installed; .ci/run installs it) reads the saved tiles
// as a standard client does: it checks them against the checkpoint, rebuilds the root and proves
// inclusion and consistency from them, and checks warden's own proof paths.
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { encodeCursor } from "../../src/receipts/cursor.ts";
import { parseTilePath, tilePath } from "../../src/receipts/tiles.ts";
import { bearer, pool, protect, setPlan } from "../helpers/customer.ts";
import { BASE, call, expectErrorShape, signup, testService } from "../helpers/service.ts";

const GOPATH = "/usr/share/gocode";
const goTlog = Bun.which("go") && existsSync(join(GOPATH, "src/golang.org/x/mod/sumdb/tlog/tile.go"));
if (!goTlog) console.warn("tiles.test.ts: `go` or golang-golang-x-mod-dev is not installed: the Go client test is skipped");

const sha = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();
/** RFC 9162 root of a complete subtree (a power of two of leaves). */
const subtreeRoot = (leaves: Buffer[]): Buffer =>
  leaves.length === 1 ? leaves[0] : sha(Buffer.from([1]), subtreeRoot(leaves.slice(0, leaves.length / 2)), subtreeRoot(leaves.slice(leaves.length / 2)));

describe("tile paths (c2sp.org/tlog-tiles)", () => {
  test("parse the spec's spelling, and print it back", () => {
    const cases: [string, ReturnType<typeof parseTilePath>][] = [
      ["0/000", { level: 0, index: 0, width: 256 }],
      ["0/x001/x234/067", { level: 0, index: 1234067, width: 256 }],
      ["1/x001/x234/067.p/8", { level: 1, index: 1234067, width: 8 }],
      ["63/999.p/255", { level: 63, index: 999, width: 255 }],
      ["entries/x001/000.p/1", { level: "entries", index: 1000, width: 1 }],
    ];
    for (const [path, tile] of cases) {
      expect(parseTilePath(path)).toEqual(tile);
      expect(tilePath(tile!)).toBe(path);
    }
  });

  test("refuse every other spelling, so each tile has one path", () => {
    const bad = ["", "0", "0/", "0/1", "0/0000", "0/x000/001", "0/x001", "0/001/", "00/000", "64/000", "x/000", "data/000",
      "0/000.p/0", "0/000.p/256", "0/000.p/007", "0/000.p/", "0/000.p/1/", "0/-01", "0/x001/x002/x003/x004/x005/006"];
    for (const path of bad) expect(parseTilePath(path)).toBeUndefined();
  });
});

describe("GET /customer/log/tile/...", () => {
  // Level 0: tiles 000, 001 and 002.p/8; level 1 (tree level 8): 000.p/2. Leaves: the signup's
  // key.created event (seq 0), then N - 1 decisions.
  const N = 520;
  const OLD = 100;
  let a: Awaited<ReturnType<typeof signup>>;
  let chain: Buffer[];
  let oldHead: { tree_size: number; root_hash: string };

  /** The raw reply: tiles are bytes, which the suite's `call` would read as text. */
  async function fetchTile(path: string, token = a.token) {
    const { service } = await testService();
    const res = await service.handle(new Request(`${BASE}/customer/log/tile/${path}`, { headers: bearer(token) }));
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  beforeAll(async () => {
    a = await signup();
    await setPlan(a.tenantId, "enterprise");
    const fill = (from: number, to: number) => pool(to - from, 16, (i) => protect(a.apiKey, { action: "document.read", resource: `docs/${from + i}` }));
    await fill(1, OLD);
    oldHead = (await call("GET", "/customer/receipts/checkpoint", { headers: bearer(a.token) })).body;
    expect(oldHead.tree_size).toBe(OLD);
    await fill(OLD, N);
    const receipts: { seq: number; chain_hash: string }[] = [];
    for (let cursor = ""; ; ) {
      const page = (await call("GET", `/customer/receipts?limit=100${cursor}`, { headers: bearer(a.token) })).body;
      receipts.push(...page.receipts);
      if (!page.next_cursor) break;
      cursor = `&cursor=${page.next_cursor}`;
    }
    chain = receipts.sort((x, y) => x.seq - y.seq).map((r) => Buffer.from(r.chain_hash.slice(2), "hex"));
    expect(chain.length).toBe(N);
  }, 60_000);

  test("level-0 tiles hold the leaf hashes, level-1 tiles the roots of 256 leaves; entry bundles the chain hashes", async () => {
    const leaves = chain.map((c) => sha(Buffer.from([0]), c));
    const expected: Record<string, Buffer> = {
      "0/000": Buffer.concat(leaves.slice(0, 256)),
      "0/001": Buffer.concat(leaves.slice(256, 512)),
      "0/002.p/8": Buffer.concat(leaves.slice(512, 520)),
      "0/001.p/3": Buffer.concat(leaves.slice(256, 259)),
      "1/000.p/2": Buffer.concat([subtreeRoot(leaves.slice(0, 256)), subtreeRoot(leaves.slice(256, 512))]),
      "1/000.p/1": subtreeRoot(leaves.slice(0, 256)),
      "entries/000": Buffer.concat(chain.slice(0, 256).map((c) => Buffer.concat([Buffer.from([0, 32]), c]))),
      "entries/002.p/8": Buffer.concat(chain.slice(512, 520).map((c) => Buffer.concat([Buffer.from([0, 32]), c]))),
    };
    for (const [path, bytes] of Object.entries(expected)) {
      const reply = await fetchTile(path);
      expect({ path, status: reply.status }).toEqual({ path, status: 200 });
      expect(reply.body.equals(bytes)).toBe(true);
      expect(reply.headers.get("content-type")).toBe("application/octet-stream");
      expect(reply.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    }
  });

  test("the tile's path as a generated client sends it, its slashes as %2F, names the same tile; a broken escape is 400", async () => {
    for (const path of ["0/001.p/3", "entries/000.p/2", "1/000.p/2"]) {
      const encoded = await fetchTile(encodeURIComponent(path));
      expect({ path, status: encoded.status }).toEqual({ path, status: 200 });
      expect(encoded.body.equals((await fetchTile(path)).body)).toBe(true);
    }
    expectErrorShape(await call("GET", "/customer/log/tile/0%2F000%E0%A4%A", { headers: bearer(a.token) }), 400, "invalid_request");
  });

  test("a tile the log does not hold (yet) is 404; a malformed path 400; no session 401", async () => {
    for (const path of ["0/002", "0/002.p/9", "0/003.p/1", "1/000", "1/000.p/3", "2/000.p/1", "entries/002", "63/000.p/1"]) {
      const reply = await call("GET", `/customer/log/tile/${path}`, { headers: bearer(a.token) });
      expectErrorShape(reply, 404, "not_found");
    }
    for (const path of ["0/1", "0/000.p/256", "0/x000/001", "64/000", "0"]) {
      const reply = await call("GET", `/customer/log/tile/${path}`, { headers: bearer(a.token) });
      expectErrorShape(reply, 400, "invalid_request");
    }
    expectErrorShape(await call("GET", "/customer/log/tile/0/000"), 401, "unauthorized");
  });

  test("each tenant reads its own log's tiles", async () => {
    const b = await signup();
    await protect(b.apiKey);
    // b's log: its signup's event and one decision.
    const own = await fetchTile("0/000.p/2", b.token);
    expect(own.status).toBe(200);
    expect(own.body.subarray(0, 32).equals(sha(Buffer.from([0]), chain[0]))).toBe(false);
    expect((await fetchTile("0/000.p/3", b.token)).status).toBe(404);
  });

  test.skipIf(!goTlog)("Go's sumdb/tlog checks the tiles against the checkpoint and proves from them; a changed tile fails", async () => {
    const head = (await call("GET", "/customer/receipts/checkpoint", { headers: bearer(a.token) })).body;
    expect(head.tree_size).toBe(N);
    const dir = mkdtempSync(join(tmpdir(), "warden-tiles-"));
    const save = async (path: string, bytes?: Buffer) => {
      const file = join(dir, "tile", path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, bytes ?? (await fetchTile(path)).body);
    };
    // Every tile a client of a 520-leaf tree may ask for.
    for (const path of ["0/000", "0/001", "0/002.p/8", "1/000.p/2"]) await save(path);
    const index = 300;
    const receipt = (await call("GET", `/customer/receipts?limit=1&cursor=${encodeCursor(index + 1)}`, { headers: bearer(a.token) })).body.receipts[0];
    expect(receipt.seq).toBe(index);
    const proof = (await call("GET", `/customer/receipts/${receipt.receipt_id}/proof`, { headers: bearer(a.token) })).body;
    const consistency = (await call("GET", `/customer/receipts/consistency?from=${OLD}`, { headers: bearer(a.token) })).body;
    const unhex = (h: string) => h.slice(2);
    const request = {
      dir, size: N, root: unhex(head.root_hash), index, record: unhex(receipt.chain_hash), path: proof.path.map(unhex),
      old_size: OLD, old_root: unhex(oldHead.root_hash), consistency: consistency.path.map(unhex),
    };
    const run = () => {
      const go = Bun.spawnSync(["go", "run", join(import.meta.dir, "..", "go", "verify-tiles.go")], {
        stdin: Buffer.from(JSON.stringify(request)),
        // Offline, from the Debian package's GOPATH: no module proxy, no go.mod.
        env: { ...process.env, GO111MODULE: "off", GOPATH, GOFLAGS: "", GOPROXY: "off", GOCACHE: process.env.GOCACHE ?? mkdtempSync(join(tmpdir(), "warden-gocache-")) },
      });
      return { code: go.exitCode, out: (go.stdout.toString() + go.stderr.toString()).trim() };
    };
    expect(run()).toEqual({ code: 0, out: "ok" });
    const changed = Buffer.from((await fetchTile("0/001")).body);
    changed[40] ^= 1;
    await save("0/001", changed);
    const refused = run();
    expect(refused.code).toBe(1);
    expect(refused.out).toContain("downloaded inconsistent tile");
  }, 240_000);
});
