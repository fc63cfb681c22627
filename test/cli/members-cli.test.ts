// `warden members list|remove` as a user runs it: a child process against a real HTTPS server in
// this process. A removal prints the member's keys, kept working or (--revoke-keys) revoked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Service } from "../../src/app/service.ts";
import { serve } from "../../src/app/server.ts";
import { bearer } from "../helpers/customer.ts";
import { linkToken, startInbox, type Inbox } from "../helpers/mail.ts";
import { call, GOOD_PASSWORD, openTestDb, testConfig, uniqueEmail } from "../helpers/service.ts";
import { runCli } from "../helpers/cli.ts";

const SLOW = 60_000;
const insecure = { tls: { rejectUnauthorized: false } } as RequestInit;

let dir: string;
let url: string;
let token: string;
let service: Service;
let inbox: Inbox;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-members-cli-"));
  const db = await openTestDb();
  // Mail to a real SMTP server: the invitations' links.
  inbox = await startInbox();
  const started = await serve(testConfig({ port: 0, dataDir: join(dir, "data"), logLevel: "warn", smtpUrl: inbox.url }), { db });
  ({ stop, url, service } = started);
  const res = await fetch(`${url}/auth/signup`, { ...insecure, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: uniqueEmail("members-cli"), password: GOOD_PASSWORD }) });
  token = ((await res.json()) as Record<string, string>).token!;
}, SLOW);

afterAll(async () => {
  await stop?.();
  await inbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, SLOW);

const cli = (args: string[]) => runCli(["members", ...args], { WARDEN_URL: url, WARDEN_INSECURE: "1", WARDEN_TOKEN: token });
const protect = async (secret: string) =>
  (await fetch(`${url}/v1/protect`, { ...insecure, method: "POST", headers: { "content-type": "application/json", "x-api-key": secret }, body: JSON.stringify({ action: "document.read" }) })).status;

/** A developer of the tenant with one key of their own. */
async function developerWithKey(label: string) {
  const email = uniqueEmail("dev");
  expect((await call("POST", "/customer/members/invitations", { json: { email, role: "developer" }, headers: bearer(token), service })).status).toBe(201);
  const [mail] = await inbox.waitFor(email);
  const accepted = await call("POST", "/auth/invitations/accept", { json: { token: linkToken(mail, "/console/invitation"), password: GOOD_PASSWORD }, service });
  expect(accepted.status).toBe(200);
  const made = await call("POST", "/customer/keys", { json: { label }, headers: bearer(accepted.body.token), service });
  expect(made.status).toBe(201);
  return { memberId: accepted.body.member_id as string, keyId: made.body.key_id as string, secret: made.body.secret as string };
}

describe("warden members", () => {
  test("list shows each member's keys; remove keeps them working and says so; --revoke-keys revokes them", async () => {
    const kept = await developerWithKey("kept bot");
    const revoked = await developerWithKey("revoked bot");
    const listed = await cli(["list"]);
    expect(listed.code).toBe(0);
    expect(listed.json.members.find((m: { member_id: string }) => m.member_id === kept.memberId).keys).toEqual([expect.objectContaining({ key_id: kept.keyId, label: "kept bot" })]);

    const plain = await cli(["remove", kept.memberId]);
    expect(plain.code).toBe(0);
    expect(plain.json).toMatchObject({ ok: true, member_id: kept.memberId, revoked_keys: [], kept_keys: [{ key_id: kept.keyId, label: "kept bot" }] });
    expect(plain.stderr).toContain(`${kept.keyId} (kept bot)`);
    expect(await protect(kept.secret)).toBe(200);

    const withKeys = await cli(["remove", revoked.memberId, "--revoke-keys"]);
    expect(withKeys.code).toBe(0);
    expect(withKeys.json).toMatchObject({ revoked_keys: [{ key_id: revoked.keyId, label: "revoked bot" }], kept_keys: [] });
    expect(withKeys.stderr).toBe("");
    expect(await protect(revoked.secret)).toBe(401);
  }, SLOW);

  test("bad usage exits 2 with the usage; a refusal exits 1 naming the error", async () => {
    const none = await cli(["remove"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("members remove needs one MEMBER_ID");
    expect(none.stderr).toContain("members remove MEMBER_ID [--revoke-keys]");
    expect((await cli(["list", "--revoke-keys"])).code).toBe(2);
    expect((await cli(["shout"])).code).toBe(2);
    const unknown = await cli(["remove", `mbr_${"A".repeat(22)}`]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("HTTP 404 not_found");
  }, SLOW);
});
