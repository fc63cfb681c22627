// OAuth tokens for remote gateways (docs/api.md, "OAuth for agents"; docs/security.md, "OAuth
// tokens"). Codes, access tokens and refresh tokens are opaque random secrets stored only as their
// SHA-256. Each names its gateway in its text (`wat_<gateway>_<secret>`): the gateway's id is in
// the resource URL the client already holds, and it leads to the tenant (mcp_gateway_routes), so
// every statement that reads a token names its tenant. The rules (single use, rotation, reuse
// revokes the grant) live in sql/schema/17_oauth.sql; this module mints, hashes and maps.
import { createHash } from "node:crypto";
import type { AuditEvent } from "../audit/events.ts";
import type { AuditTrail } from "../audit/trail.ts";
import { sha256PlainHexSync } from "../crypto/sync.ts";
import type { Queryable } from "../db/index.ts";
import { randomBase62 } from "../ids.ts";
import type { AccessGrant, AccessTokens } from "./access.ts";
import { findGateway, gatewayIdOf, gatewayResource, type GatewayResource } from "./resources.ts";

/** How long each kind lives, in seconds. */
export interface TokenLifetimes {
  code: number;
  access: number;
  refresh: number;
}

export const DEFAULT_LIFETIMES: TokenLifetimes = { code: 120, access: 600, refresh: 30 * 86_400 };

type Kind = "wac_" | "wat_" | "wrt_";
const SHAPE = /^(wac_|wat_|wrt_)([0-9A-Za-z]{22})_[0-9A-Za-z]{43}$/;

/** A new secret of a kind for a gateway: 43 base62 characters (256 bits) after the gateway's id. */
function mint(kind: Kind, gatewayId: string): string {
  return `${kind}${gatewayId.slice(3)}_${randomBase62(43)}`;
}

/** The gateway a token of `kind` names, when it has the form; null otherwise (nothing is looked up). */
export function tokenGateway(kind: Kind, token: string): string | null {
  const m = SHAPE.exec(token);
  return m && m[1] === kind ? `gw_${m[2]}` : null;
}

function hash(secret: string): string {
  return sha256PlainHexSync(secret);
}

/** BASE64URL(SHA-256(verifier)) as PKCE S256 defines it (RFC 7636 4.2). */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/** A PKCE code verifier's form (RFC 7636 4.1): 43 to 128 unreserved characters. */
export function isVerifier(text: string): boolean {
  return /^[A-Za-z0-9._~-]{43,128}$/.test(text);
}

/** What a person consented to: a grant, with the PKCE challenge of its code. */
export interface NewGrant {
  tenantId: string;
  gatewayId: string;
  memberId: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  scope: string;
  /** The S256 code_challenge of the authorization request. */
  codeChallenge: string;
}

/** The token endpoint's success body (RFC 6749 5.1), with the grant's id. */
export interface IssuedTokens {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
  grant_id: string;
}

export type RefusalReason = "unknown" | "mismatch" | "expired" | "reused" | "revoked";

export type TokenOutcome = { ok: true; tokens: IssuedTokens } | { ok: false; reason: RefusalReason; grant_id: string | null };

export class OAuthTokens implements AccessTokens {
  constructor(
    private readonly db: Queryable,
    private readonly audit: AuditTrail,
    private readonly publicUrl: string,
    private readonly now: () => Date,
    readonly lifetimes: TokenLifetimes = DEFAULT_LIFETIMES,
  ) {}

  /** The grant of a live access token issued for exactly `resource`, with its gateway (one read); null otherwise. */
  async verify(token: string, resource: string): Promise<AccessGrant | null> {
    const gatewayId = tokenGateway("wat_", token);
    if (!gatewayId || gatewayIdOf(this.publicUrl, resource) !== gatewayId) return null;
    const row = await this.db.one("oauth/access_verify", [gatewayId, hash(token), this.now()]);
    if (!row) return null;
    return {
      grant_id: row.grant_id,
      tenant_id: row.tenant_id,
      account_id: row.account_id,
      member_id: row.member_id,
      role: row.role,
      client_id: row.client_id,
      client_name: row.client_name,
      redirect_uri: row.redirect_uri,
      gateway_id: row.gateway_id,
      resource: gatewayResource(this.publicUrl, row.gateway_id),
      scope: row.scope,
      expires_at: new Date(row.expires_at).toISOString(),
      // oauth_access_grant() answers only for an active gateway; its columns' CHECKs hold the rest to these values.
      gateway: {
        gateway_id: row.gateway_id,
        tenant_id: row.tenant_id,
        name: row.gateway_name,
        upstream_url: row.upstream_url,
        upstream_auth: row.upstream_auth as GatewayResource["upstream_auth"],
        status: row.gateway_status as GatewayResource["status"],
        sealed: { key: row.key_secret_sealed, shared: row.secret_sealed, member: row.member_secret_sealed },
      },
    };
  }

  /**
   * Records a consent: the grant and its one-time code (answered once, stored hashed). Runs on `q`,
   * so the caller's transaction (with its audit event) holds both.
   */
  async grant(q: Queryable, g: NewGrant, grantId: string): Promise<{ grant_id: string; code: string; code_expires_at: string }> {
    const now = this.now();
    const code = mint("wac_", g.gatewayId);
    const expires = new Date(now.getTime() + this.lifetimes.code * 1000);
    await q.one("oauth/grant_create", [g.tenantId, grantId, g.gatewayId, g.memberId, g.clientId, g.clientName, g.redirectUri, g.scope, hash(code), g.codeChallenge, expires, now]);
    return { grant_id: grantId, code, code_expires_at: expires.toISOString() };
  }

  /** A fresh access and refresh token for an active grant of a tenant's gateway; null when the grant is not active. */
  async issue(tenantId: string, grantId: string, gatewayId: string, scope: string): Promise<IssuedTokens | null> {
    const t = this.fresh(gatewayId);
    const rows = await this.db.query("oauth/grant_issue", [tenantId, grantId, hash(t.access), t.accessExpires, hash(t.refresh), t.refreshExpires, t.now]);
    return rows.length === 0 ? null : this.body(t, grantId, scope);
  }

  /** The authorization_code grant: the code once, with its client, redirect URI, resource and PKCE verifier. */
  async redeemCode(code: string, req: { clientId: string; redirectUri: string; resource: string | null; verifier: string; requestId: string }): Promise<TokenOutcome> {
    const gatewayId = tokenGateway("wac_", code);
    if (!gatewayId) return { ok: false, reason: "unknown", grant_id: null };
    // The resource is optional here (the code is bound to one already); when sent it must be that one.
    if (req.resource !== null && gatewayIdOf(this.publicUrl, req.resource) !== gatewayId) return { ok: false, reason: "mismatch", grant_id: null };
    const gateway = await findGateway(this.db, gatewayId);
    if (!gateway) return { ok: false, reason: "unknown", grant_id: null };
    const t = this.fresh(gatewayId);
    return this.audit.tx(async (q, record) => {
      const row = (await q.one("oauth/code_redeem", [gateway.tenant_id, hash(code), req.clientId, req.redirectUri, gatewayId, s256(req.verifier), hash(t.access), t.accessExpires, hash(t.refresh), t.refreshExpires, t.now]))!;
      if (row.revoked) await record(serviceRevoked(gateway.tenant_id, row.grant_id!, "code_reused", req.requestId));
      if (row.outcome !== "issued") return { ok: false as const, reason: row.outcome as RefusalReason, grant_id: row.grant_id };
      const grant = (await q.one("oauth/grant_get", [gateway.tenant_id, row.grant_id!]))!;
      return { ok: true as const, tokens: this.body(t, row.grant_id!, grant.scope) };
    });
  }

  /** The refresh_token grant: the token is used once and replaced; a second use revokes the grant. */
  async refresh(refreshToken: string, req: { clientId: string; resource: string | null; requestId: string }): Promise<TokenOutcome> {
    const gatewayId = tokenGateway("wrt_", refreshToken);
    if (!gatewayId) return { ok: false, reason: "unknown", grant_id: null };
    if (req.resource !== null && gatewayIdOf(this.publicUrl, req.resource) !== gatewayId) return { ok: false, reason: "mismatch", grant_id: null };
    const gateway = await findGateway(this.db, gatewayId);
    if (!gateway) return { ok: false, reason: "unknown", grant_id: null };
    const t = this.fresh(gatewayId);
    return this.audit.tx(async (q, record) => {
      const row = (await q.one("oauth/refresh_rotate", [gateway.tenant_id, hash(refreshToken), req.clientId, gatewayId, hash(t.access), t.accessExpires, hash(t.refresh), t.refreshExpires, t.now]))!;
      if (row.revoked) await record(serviceRevoked(gateway.tenant_id, row.grant_id!, "refresh_token_reused", req.requestId));
      if (row.outcome !== "issued") return { ok: false as const, reason: row.outcome as RefusalReason, grant_id: row.grant_id };
      return { ok: true as const, tokens: this.body(t, row.grant_id!, row.scope ?? "") };
    });
  }

  /**
   * RFC 7009: an access or refresh token of `clientId` ends its whole grant. Unknown tokens, and
   * another client's, change nothing (the endpoint answers 200 alike).
   */
  async revokeToken(token: string, clientId: string | null, requestId: string): Promise<{ tenant_id: string; grant_id: string } | null> {
    const gatewayId = tokenGateway("wat_", token) ?? tokenGateway("wrt_", token);
    if (!gatewayId) return null;
    const gateway = await findGateway(this.db, gatewayId);
    if (!gateway) return null;
    return this.audit.tx(async (q, record) => {
      const row = await q.one("oauth/token_grant", [gateway.tenant_id, hash(token)]);
      if (!row || row.status !== "active" || (clientId !== null && row.client_id !== clientId)) return null;
      const done = await q.one("oauth/grant_revoke", [gateway.tenant_id, row.grant_id, null, "token_revoked", this.now()]);
      if (done?.revoked) await record(serviceRevoked(gateway.tenant_id, row.grant_id, "token_revoked", requestId));
      return { tenant_id: gateway.tenant_id, grant_id: row.grant_id };
    });
  }

  private fresh(gatewayId: string) {
    const now = this.now();
    return {
      now,
      access: mint("wat_", gatewayId),
      refresh: mint("wrt_", gatewayId),
      accessExpires: new Date(now.getTime() + this.lifetimes.access * 1000),
      refreshExpires: new Date(now.getTime() + this.lifetimes.refresh * 1000),
    };
  }

  private body(t: ReturnType<OAuthTokens["fresh"]>, grantId: string, scope: string): IssuedTokens {
    return { access_token: t.access, token_type: "Bearer", expires_in: this.lifetimes.access, refresh_token: t.refresh, scope, grant_id: grantId };
  }
}

/** The audit event of a grant the service revoked (a reused code or refresh token, a client's revocation). */
function serviceRevoked(tenantId: string, grantId: string, reason: string, requestId: string): AuditEvent {
  return { tenantId, event: "oauth.grant_revoked", actor: { operator: "oauth" }, target: { grant_id: grantId, reason }, requestId };
}
