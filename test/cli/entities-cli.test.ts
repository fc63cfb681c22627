// `warden entities import FILE` as a user runs it: a child process against a real HTTPS server in
// this process; JSON, a JSON array and JSON lines, sent in calls the service takes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "../../src/app/server.ts";
import { batchesOf, entitiesOf } from "../../src/cli/entities.ts";
import type { Db } from "../../src/db/index.ts";
import { GOOD_PASSWORD, openTestDb, testConfig, uniqueEmail } from "../helpers/service.ts";
import { planSetAsApproved } from "../helpers/sql.ts";
import { runCli } from "../helpers/cli.ts";

const SLOW = 60_000;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

let dir: string;
let url: string;
let token: string;
let stop: (() => Promise<void>) | undefined;
let db: Db;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-entities-cli-"));
  db = await openTestDb();
  const started = await serve(testConfig({ port: 0, dataDir: join(dir, "data"), logLevel: "warn" }), { db });
  stop = started.stop;
  url = started.url;
  const res = await fetch(`${url}/auth/signup`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: uniqueEmail("entities-cli"), password: GOOD_PASSWORD }) });
  const signup = (await res.json()) as Record<string, string>;
  token = signup.token!;
}, SLOW);

afterAll(async () => {
  await stop?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

const cli = (args: string[], env: Record<string, string> = {}, stdin?: string) =>
  runCli(["entities", ...args], { WARDEN_URL: url, WARDEN_INSECURE: "1", WARDEN_TOKEN: token, ...env }, { stdin });
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const listed = async () =>
  ((await (await fetch(`${url}/customer/entities?type=user`, { ...insecure, headers: { authorization: `Bearer ${token}` } })).json()) as { entities: { type: string; id: string }[] }).entities;

describe("warden entities import", () => {
  test("refused on free (no custom_policy): exit 1 with the service's answer; then JSON, an array and JSON lines, in calls of at most 1,000", async () => {
    const free = await cli(["import", file("one.json", JSON.stringify({ entities: [{ type: "user", id: "u0", attributes: {} }] }))]);
    expect(free.code).toBe(1);
    expect(free.stderr).toContain("plan_required");

    const { tenant_id } = (await (await fetch(`${url}/customer/account`, { ...insecure, headers: { authorization: `Bearer ${token}` } })).json()) as { tenant_id: string };
    expect(await planSetAsApproved(db, tenant_id, "pro")).toHaveLength(1);

    const wrapped = await cli(["import", file("wrapped.json", JSON.stringify({ entities: [{ type: "user", id: "u1", attributes: { level: 1 } }] }))]);
    expect(wrapped.code).toBe(0);
    expect(wrapped.json).toEqual({ ok: true, upserted: 1, calls: 1, version: 1 });

    const many = Array.from({ length: 1500 }, (_, i) => ({ type: "doc", id: `d${i}`, attributes: {} }));
    const array = await cli(["import", file("many.json", JSON.stringify(many))]);
    expect(array.code).toBe(0);
    expect(array.json).toMatchObject({ ok: true, upserted: 1500, calls: 2 });

    const lines = [{ type: "user", id: "u2", attributes: { teams: ["a"] } }, { type: "user", id: "u3", attributes: {}, parents: [{ type: "org", id: "acme" }] }];
    const jsonl = await cli(["import", "-"], {}, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    expect(jsonl.code).toBe(0);
    expect(jsonl.json).toMatchObject({ ok: true, upserted: 2, calls: 1 });
    expect((await listed()).filter((e) => e.type === "user").map((e) => e.id)).toEqual(["u1", "u2", "u3"]);
  }, SLOW);

  test("a bad entity: exit 1 naming its path and how far the import got; a file that is not JSON: exit 2", async () => {
    const bad = await cli(["import", file("bad.jsonl", `${JSON.stringify({ type: "user", id: "x", attributes: { nested: { a: 1 } } })}\n`)]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("body/entities/0/attributes/nested");
    expect(bad.stderr).toContain("0 entities written in 0 calls");
    const notJson = await cli(["import", file("nope.txt", "type,id\nuser,u1\n")]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain("nope.txt:1: not JSON");
    expect((await cli(["import"])).code).toBe(2);
    expect((await cli(["export", "x"])).code).toBe(2);
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("entities import FILE");
  }, SLOW);
});

describe("the file's forms and the calls", () => {
  test("JSON {entities}, an array, JSON lines, one object; batches of at most 1,000 entities and 60 KiB", () => {
    const e = { type: "t", id: "1", attributes: {} };
    expect(entitiesOf(JSON.stringify({ entities: [e] }), "f")).toEqual([e]);
    expect(entitiesOf(JSON.stringify([e, e]), "f")).toEqual([e, e]);
    expect(entitiesOf(`${JSON.stringify(e)}\n\n${JSON.stringify(e)}\n`, "f")).toEqual([e, e]);
    expect(entitiesOf(JSON.stringify(e), "f")).toEqual([e]);
    expect(() => entitiesOf(JSON.stringify({ entities: [e], more: 1 }), "f")).toThrow("nothing else");
    expect(batchesOf(Array.from({ length: 2500 }, () => e)).map((b) => b.length)).toEqual([1000, 1000, 500]);
    const big = { ...e, attributes: { blob: "x".repeat(15_000) } };
    expect(batchesOf([big, big, big, big, big]).map((b) => b.length)).toEqual([4, 1]);
  });
});
