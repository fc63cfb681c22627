// Customer sessions: HS256 JWTs with jose, 24 h, issuer and audience checked, algorithm pinned.
// The `sep` claim is the tenant's session epoch: bumping it in the database ends every session;
// a signed-out token's `jti` is refused on its own (session_revocations). A second-factor
// challenge is a 5-minute JWT of another audience, so it never passes for a session.
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Db, Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { noteCaller } from "../http/request-state.ts";
import { randomBase62 } from "../ids.ts";

export const JWT_LIFETIME_SECONDS = 24 * 60 * 60;
const ISSUER = "warden";
const AUDIENCE = "warden:customer";
const MFA_AUDIENCE = "warden:mfa";
export const MFA_CHALLENGE_SECONDS = 5 * 60;

export interface Session {
  tenant_id: string;
  plan: string;
  /** The token's id and expiry, to sign this one session out. */
  jti: string;
  expires_at: Date;
}

/** JWT_SECRET when configured, else a random secret created once and shared through the database. */
export async function serviceSecret(db: Queryable, configured?: string): Promise<string> {
  if (configured) {
    if (configured.length < 32) throw new Error("JWT_SECRET must be at least 32 characters");
    return configured;
  }
  await db.query("system/secret_create", ["jwt_secret", randomBase62(64)]);
  const row = await db.one("system/secret_get", ["jwt_secret"]);
  return row!.value;
}

export class Sessions {
  /** `previous` verifies (JWT_SECRET_PREVIOUS: sessions from before a change of secret); `key` signs and verifies. */
  private constructor(private readonly key: CryptoKey, private readonly previous: CryptoKey | undefined, private readonly db: Db) {}

  /** Sessions signed with the service secret (see serviceSecret); tokens signed with `previous` are still accepted. */
  static async open(db: Db, secret: string, previous?: string): Promise<Sessions> {
    // Imported once: given raw bytes, jose imports them again on every sign and verify.
    const hmac = (raw: string) => crypto.subtle.importKey("raw", new TextEncoder().encode(raw), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    return new Sessions(await hmac(secret), previous === undefined ? undefined : await hmac(previous), db);
  }

  issue(tenantId: string, epoch: number, now = new Date()): Promise<{ token: string; expires_at: string }> {
    return this.sign(tenantId, epoch, AUDIENCE, JWT_LIFETIME_SECONDS, now);
  }

  /** The `mfa_token` of a login whose password was right: names the account, 5 minutes. */
  issueMfaChallenge(tenantId: string, epoch: number, now = new Date()): Promise<{ token: string; expires_at: string }> {
    return this.sign(tenantId, epoch, MFA_AUDIENCE, MFA_CHALLENGE_SECONDS, now);
  }

  /** The account an `mfa_token` names, if it is ours, unexpired and from the current epoch; else 401. */
  async readMfaChallenge(token: string, now = new Date()): Promise<{ tenant_id: string; session_epoch: number }> {
    const { sub, sep } = await this.verified(token, MFA_AUDIENCE, now);
    const row = await this.db.one("accounts/session", [sub, ""]);
    if (!row || row.session_epoch !== sep) throw new AppError("unauthorized", "The sign-in has ended; log in again.");
    return { tenant_id: row.tenant_id, session_epoch: row.session_epoch };
  }

  /** Ends one session (all: every session of the tenant) on every instance at once. */
  async signOut(session: Session, all: boolean, now: Date): Promise<void> {
    if (all) await this.db.query("accounts/end_sessions", [session.tenant_id]);
    else await this.db.query("accounts/session_revoke", [session.tenant_id, session.jti, session.expires_at.toISOString(), now.toISOString()]);
  }

  private async sign(tenantId: string, epoch: number, audience: string, lifetime: number, now: Date): Promise<{ token: string; expires_at: string }> {
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + lifetime;
    const token = await new SignJWT({ sep: epoch })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(tenantId)
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBase62(22))
      .sign(this.key);
    return { token, expires_at: new Date(exp * 1000).toISOString() };
  }

  private async verified(token: string, audience: string, now?: Date): Promise<{ sub: string; sep: number; jti: string; exp: number }> {
    const options = { algorithms: ["HS256"], issuer: ISSUER, audience, currentDate: now };
    let payload;
    try {
      try {
        ({ payload } = await jwtVerify(token, this.key, options));
      } catch (err) {
        // Signed before JWT_SECRET changed: the previous secret still vouches for it (its 24 hours at most).
        if (!(err instanceof joseErrors.JWSSignatureVerificationFailed && this.previous)) throw err;
        ({ payload } = await jwtVerify(token, this.previous, options));
      }
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new AppError("token_expired", "The session has expired; log in again.", { status: 401 });
      throw new AppError("unauthorized");
    }
    const { sub, sep, jti, exp } = payload;
    if (typeof sub !== "string" || typeof sep !== "number" || typeof jti !== "string" || typeof exp !== "number") throw new AppError("unauthorized");
    return { sub, sep, jti, exp };
  }

  /** The live session behind the request's Authorization: Bearer token, or 401. */
  async require(request: Request): Promise<Session> {
    const header = request.headers.get("authorization");
    if (!header) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
    if (!match) throw new AppError("unauthorized");
    const session = await this.authenticate(match[1]);
    noteCaller(request, session.tenant_id);
    return session;
  }

  /** The live session behind a bearer token, or 401. */
  async authenticate(token: string): Promise<Session> {
    const { sub, sep, jti, exp } = await this.verified(token, AUDIENCE);
    const row = await this.db.one("accounts/session", [sub, jti]);
    // A token from before a password reset or change carries an older epoch; a signed-out one is listed.
    if (!row || row.session_epoch !== sep || row.signed_out) throw new AppError("unauthorized");
    return { tenant_id: row.tenant_id, plan: row.plan, jti, expires_at: new Date(exp * 1000) };
  }
}
