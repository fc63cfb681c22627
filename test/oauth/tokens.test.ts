// src/oauth/tokens.ts on the database: verify() against the resource, lifetimes, rotation, reuse.
import { describe, expect, test } from "bun:test";
import { newId } from "../../src/ids.ts";
import { OAuthTokens, s256, tokenGateway } from "../../src/oauth/tokens.ts";
import { call, signup, testService } from "../helpers/service.ts";
import { bearer } from "../helpers/accounts.ts";
import { addMember } from "../helpers/members.ts";
import { testOne, testQuery } from "../helpers/sql.ts";
import { addGateway, grantWithTokens, pkce } from "../helpers/oauth.ts";
import { hashSecret } from "../../src/keys/secret.ts";

async function setup() {
  const { service, db } = await testService();
  const owner = await signup();
  const gw = await addGateway(owner.tenantId);
  return { service, db, owner, gw, memberId: owner.memberId as string, tokens: service.deps.accessTokens };
}


describe("OAuthTokens", () => {
  test("an access token verifies for its gateway's resource, with the person, role, client and expiry", async () => {
    const { gw, tokens, memberId, owner } = await setup();
    const issued = await grantWithTokens(gw, memberId, { clientId: "https://agent.example/client.json", clientName: "Agent" });
    expect(issued.access_token).toMatch(/^wat_/);
    expect(issued.refresh_token).toMatch(/^wrt_/);
    expect(issued.expires_in).toBe(600);
    const grant = await tokens.verify(issued.access_token, gw.resource);
    expect(grant).toMatchObject({ tenant_id: gw.tenantId, member_id: memberId, role: "owner", client_id: "https://agent.example/client.json", client_name: "Agent", gateway_id: gw.gatewayId, resource: gw.resource, scope: "mcp" });
    expect(grant!.account_id).toMatch(/^acct_/);
    expect(Date.parse(grant!.expires_at) - Date.now()).toBeGreaterThan(590_000);
    expect(owner.tenantId).toBe(gw.tenantId);
  });

  test("verify() is null for another gateway's resource, a refresh token, a changed token, a disabled gateway", async () => {
    const { gw, tokens, memberId, db } = await setup();
    const other = await addGateway(gw.tenantId);
    const issued = await grantWithTokens(gw, memberId);
    expect(await tokens.verify(issued.access_token, other.resource)).toBeNull();
    expect(await tokens.verify(issued.access_token, `${gw.resource}/`)).toBeNull();
    expect(await tokens.verify(issued.refresh_token, gw.resource)).toBeNull();
    expect(await tokens.verify(issued.access_token.slice(0, -1) + (issued.access_token.endsWith("a") ? "b" : "a"), gw.resource)).toBeNull();
    // Another gateway's id written into the token: its hash names nothing there.
    const moved = `wat_${other.gatewayId.slice(3)}_${issued.access_token.slice(-43)}`;
    expect(await tokens.verify(moved, other.resource)).toBeNull();
    expect(await tokens.verify(issued.access_token, gw.resource)).not.toBeNull();
    await testQuery(db, "oauth_gateway_set_status", [gw.tenantId, gw.gatewayId, "disabled"]);
    expect(await tokens.verify(issued.access_token, gw.resource)).toBeNull();
  });

  test("an access token expires after its lifetime", async () => {
    const { gw, tokens, memberId, service } = await setup();
    const issued = await grantWithTokens(gw, memberId);
    const d = service.deps;
    const after = new OAuthTokens(d.db, d.audit, d.config.publicUrl, () => new Date(Date.now() + 601_000));
    expect(await after.verify(issued.access_token, gw.resource)).toBeNull();
    const before = new OAuthTokens(d.db, d.audit, d.config.publicUrl, () => new Date(Date.now() + 590_000));
    expect(await before.verify(issued.access_token, gw.resource)).not.toBeNull();
    void tokens;
  });

  test("a refresh token rotates; used twice, the whole grant is revoked (every token of it)", async () => {
    const { gw, tokens, memberId, db } = await setup();
    const first = await grantWithTokens(gw, memberId);
    const second = await tokens.refresh(first.refresh_token, { clientId: "cli_test", resource: gw.resource, requestId: "req_t" });
    expect(second.ok).toBe(true);
    if (!second.ok) return;
    expect(second.tokens.refresh_token).not.toBe(first.refresh_token);
    expect(await tokens.verify(second.tokens.access_token, gw.resource)).not.toBeNull();
    const again = await tokens.refresh(first.refresh_token, { clientId: "cli_test", resource: null, requestId: "req_t" });
    expect(again).toEqual({ ok: false, reason: "reused", grant_id: second.tokens.grant_id });
    expect(await tokens.verify(second.tokens.access_token, gw.resource)).toBeNull();
    expect(await tokens.verify(first.access_token, gw.resource)).toBeNull();
    const third = await tokens.refresh(second.tokens.refresh_token, { clientId: "cli_test", resource: null, requestId: "req_t" });
    expect(third).toMatchObject({ ok: false, reason: "revoked" });
    expect(await testOne(db, "oauth_grant_row", [gw.tenantId, second.tokens.grant_id])).toEqual({ status: "revoked", revoked_reason: "refresh_token_reused", revoked_by: null });
    // A revocation is final: the schema refuses to make the grant active again.
    const revived = await testQuery(db, "oauth_grant_reactivate", [gw.tenantId, second.tokens.grant_id]).then(() => undefined, (e: unknown) => e);
    expect((revived as { sqlstate?: string }).sqlstate).toBe("WO001");
  });

  test("a refresh is refused for another client or another resource, and changes nothing", async () => {
    const { gw, tokens, memberId } = await setup();
    const other = await addGateway(gw.tenantId);
    const first = await grantWithTokens(gw, memberId);
    expect(await tokens.refresh(first.refresh_token, { clientId: "cli_other", resource: null, requestId: "r" })).toMatchObject({ ok: false, reason: "mismatch" });
    expect(await tokens.refresh(first.refresh_token, { clientId: "cli_test", resource: other.resource, requestId: "r" })).toMatchObject({ ok: false, reason: "mismatch" });
    expect((await tokens.refresh(first.refresh_token, { clientId: "cli_test", resource: gw.resource, requestId: "r" })).ok).toBe(true);
  });

  test("a code redeems once, with its verifier; a second redemption revokes what it issued", async () => {
    const { gw, tokens, memberId, service, db } = await setup();
    const { verifier, challenge } = pkce();
    expect(s256(verifier)).toBe(challenge);
    const grantId = newId("grt_");
    const { code } = await tokens.grant(service.deps.db, { tenantId: gw.tenantId, gatewayId: gw.gatewayId, memberId, clientId: "cli_x", clientName: "X", redirectUri: "https://x.example/cb", scope: "", codeChallenge: challenge }, grantId);
    expect(tokenGateway("wac_", code)).toBe(gw.gatewayId);
    const req = { clientId: "cli_x", redirectUri: "https://x.example/cb", resource: gw.resource, verifier, requestId: "r" };
    expect(await tokens.redeemCode(code, { ...req, verifier: pkce().verifier })).toMatchObject({ ok: false, reason: "mismatch" });
    expect(await tokens.redeemCode(code, { ...req, redirectUri: "https://x.example/other" })).toMatchObject({ ok: false, reason: "mismatch" });
    expect(await tokens.redeemCode(code, { ...req, clientId: "cli_y" })).toMatchObject({ ok: false, reason: "mismatch" });
    const good = await tokens.redeemCode(code, req);
    expect(good.ok).toBe(true);
    if (!good.ok) return;
    expect(await tokens.verify(good.tokens.access_token, gw.resource)).not.toBeNull();
    expect(await tokens.redeemCode(code, req)).toMatchObject({ ok: false, reason: "reused", grant_id: grantId });
    expect(await tokens.verify(good.tokens.access_token, gw.resource)).toBeNull();
    expect((await testOne(db, "oauth_grant_row", [gw.tenantId, grantId]))).toMatchObject({ status: "revoked", revoked_reason: "code_reused" });
    // Only hashes are stored.
    const stored = (await testQuery<{ hash: string }>(db, "oauth_secrets_stored", [gw.tenantId, grantId])).map((r) => r.hash);
    expect(stored).toContain(await hashSecret(code));
    expect(stored).not.toContain(code);
  });

  test("two redemptions of one code at once: one gets tokens, the other is the reuse that revokes them", async () => {
    const { gw, tokens, memberId, service } = await setup();
    const { verifier, challenge } = pkce();
    const grantId = newId("grt_");
    const { code } = await tokens.grant(service.deps.db, { tenantId: gw.tenantId, gatewayId: gw.gatewayId, memberId, clientId: "c", clientName: "C", redirectUri: "https://x.example/cb", scope: "", codeChallenge: challenge }, grantId);
    const req = { clientId: "c", redirectUri: "https://x.example/cb", resource: null, verifier, requestId: "r" };
    const both = await Promise.all([tokens.redeemCode(code, req), tokens.redeemCode(code, req)]);
    expect(both.filter((o) => o.ok).length).toBe(1);
    expect(both.filter((o) => !o.ok && o.reason === "reused").length).toBe(1);
    const issued = both.find((o) => o.ok)!;
    if (issued.ok) expect(await tokens.verify(issued.tokens.access_token, gw.resource)).toBeNull();
  });

  test("a code expires", async () => {
    const { gw, tokens, memberId, service } = await setup();
    const { verifier, challenge } = pkce();
    const { code } = await tokens.grant(service.deps.db, { tenantId: gw.tenantId, gatewayId: gw.gatewayId, memberId, clientId: "c", clientName: "C", redirectUri: "https://x.example/cb", scope: "", codeChallenge: challenge }, newId("grt_"));
    const d = service.deps;
    const after = new OAuthTokens(d.db, d.audit, d.config.publicUrl, () => new Date(Date.now() + 121_000));
    expect(await after.redeemCode(code, { clientId: "c", redirectUri: "https://x.example/cb", resource: null, verifier, requestId: "r" })).toMatchObject({ ok: false, reason: "expired" });
  });

  test("a removed member's tokens stop working", async () => {
    const { gw, tokens, owner } = await setup();
    const dev = await addMember(owner.token, "developer");
    const issued = await grantWithTokens(gw, dev.memberId);
    expect((await tokens.verify(issued.access_token, gw.resource))?.role).toBe("developer");
    expect((await call("DELETE", `/customer/members/${dev.memberId}`, { headers: bearer(owner.token) })).status).toBe(200);
    expect(await tokens.verify(issued.access_token, gw.resource)).toBeNull();
  });
});
