// Customer sessions: HS256 JWTs with jose, 24 h, issuer and audience checked, algorithm pinned.
// The `sep` claim is the tenant's session epoch: bumping it in the database ends every session.
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Db } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { noteCaller } from "../http/request-state.ts";
import { randomBase62 } from "../ids.ts";

export const JWT_LIFETIME_SECONDS = 24 * 60 * 60;
const ISSUER = "warden";
const AUDIENCE = "warden:customer";

export interface Session {
  tenant_id: string;
  plan: string;
}

export class Sessions {
  private constructor(private readonly key: CryptoKey, private readonly db: Db) {}

  /** Imported once: given raw bytes, jose imports them again on every sign and verify. */
  private static async withSecret(secret: string, db: Db): Promise<Sessions> {
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    return new Sessions(key, db);
  }

  /** JWT_SECRET when configured, else a random secret created once and shared through the database. */
  static async open(db: Db, configured?: string): Promise<Sessions> {
    if (configured) {
      if (configured.length < 32) throw new Error("JWT_SECRET must be at least 32 characters");
      return Sessions.withSecret(configured, db);
    }
    await db.query("system/secret_create", ["jwt_secret", randomBase62(64)]);
    const row = await db.one("system/secret_get", ["jwt_secret"]);
    return Sessions.withSecret(row!.value, db);
  }

  async issue(tenantId: string, epoch: number, now = new Date()): Promise<{ token: string; expires_at: string }> {
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + JWT_LIFETIME_SECONDS;
    const token = await new SignJWT({ sep: epoch })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(tenantId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBase62(22))
      .sign(this.key);
    return { token, expires_at: new Date(exp * 1000).toISOString() };
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
    let sub: string | undefined;
    let sep: unknown;
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ["HS256"], issuer: ISSUER, audience: AUDIENCE });
      sub = payload.sub;
      sep = payload.sep;
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new AppError("token_expired", "The session has expired; log in again.", { status: 401 });
      throw new AppError("unauthorized");
    }
    if (typeof sub !== "string" || typeof sep !== "number") throw new AppError("unauthorized");
    const row = await this.db.one("accounts/session", [sub]);
    // A token from before a password reset or change carries an older epoch.
    if (!row || row.session_epoch !== sep) throw new AppError("unauthorized");
    return { tenant_id: row.tenant_id, plan: row.plan };
  }
}
