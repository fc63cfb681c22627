// Customer sessions: HS256 JWTs with jose, 24 h, issuer and audience checked, algorithm pinned.
// A session is a person's (`sub`, the account) in one tenant, as one member (`mid`, `tid`). Its
// `sep` claim is the person's session epoch and `mep` the member's: bumping either in the database
// ends the sessions it covers (every tenant, or this one); a signed-out token's `jti` is refused
// on its own (session_revocations); a removed member's are refused because the member is gone.
// Every request is checked against the route's role (./roles.ts) here, in one place.
// A second-factor challenge is a 5-minute, single-use JWT of another audience, so it never passes
// for a session.
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Db, Queryable } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { noteCaller } from "../http/request-state.ts";
import { randomBase62 } from "../ids.ts";
import { isRole, requiredRole, roleAtLeast, type Role } from "./roles.ts";

export const JWT_LIFETIME_SECONDS = 24 * 60 * 60;
const ISSUER = "warden";
const AUDIENCE = "warden:customer";
const MFA_AUDIENCE = "warden:mfa";
export const MFA_CHALLENGE_SECONDS = 5 * 60;

/** A person's session of one tenant: who (the account), as which member and role, of which tenant. */
export interface Session {
  tenant_id: string;
  plan: string;
  account_id: string;
  member_id: string;
  role: Role;
  /** Whether the person has an active second factor (a session of theirs then passed it). */
  mfa_active: boolean;
  /** The token's id and expiry, to sign this one session out. */
  jti: string;
  expires_at: Date;
}

/** The member a session is issued for, with the epochs its token must carry. */
export interface SessionSubject {
  account_id: string;
  account_epoch: number;
  tenant_id: string;
  member_id: string;
  member_epoch: number;
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

  issue(subject: SessionSubject, now = new Date()): Promise<{ token: string; expires_at: string }> {
    const claims = { sep: subject.account_epoch, tid: subject.tenant_id, mid: subject.member_id, mep: subject.member_epoch };
    return this.sign(subject.account_id, claims, AUDIENCE, JWT_LIFETIME_SECONDS, now);
  }

  /** The `mfa_token` of a login whose password was right: names the person, 5 minutes, single use. */
  issueMfaChallenge(accountId: string, epoch: number, now = new Date()): Promise<{ token: string; expires_at: string }> {
    return this.sign(accountId, { sep: epoch }, MFA_AUDIENCE, MFA_CHALLENGE_SECONDS, now);
  }

  /** The person an `mfa_token` names, if it is ours, unexpired and from the current epoch; else 401. */
  async readMfaChallenge(token: string, now = new Date()): Promise<{ account_id: string; session_epoch: number; jti: string; expires_at: Date }> {
    const { sub, sep, jti, exp } = await this.verified(token, MFA_AUDIENCE, now);
    const row = await this.db.one("accounts/account_epoch", [sub]);
    if (!row || row.session_epoch !== sep) throw new AppError("unauthorized", "The sign-in has ended; log in again.");
    return { account_id: row.account_id, session_epoch: row.session_epoch, jti, expires_at: new Date(exp * 1000) };
  }

  /** Ends one session (all: every session of the person, in every tenant) on every instance at once. */
  async signOut(session: Session, all: boolean, now: Date): Promise<void> {
    if (all) await this.db.query("accounts/end_sessions", [session.account_id]);
    else await this.db.query("accounts/session_revoke", [session.account_id, session.jti, session.expires_at.toISOString(), now.toISOString()]);
  }

  private async sign(subject: string, claims: Record<string, string | number>, audience: string, lifetime: number, now: Date): Promise<{ token: string; expires_at: string }> {
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + lifetime;
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(subject)
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBase62(22))
      .sign(this.key);
    return { token, expires_at: new Date(exp * 1000).toISOString() };
  }

  private async verified(token: string, audience: string, now?: Date): Promise<{ sub: string; sep: number; jti: string; exp: number; tid?: unknown; mid?: unknown; mep?: unknown }> {
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
    const { sub, sep, jti, exp, tid, mid, mep } = payload;
    if (typeof sub !== "string" || typeof sep !== "number" || typeof jti !== "string" || typeof exp !== "number") throw new AppError("unauthorized");
    return { sub, sep, jti, exp, tid, mid, mep };
  }

  /**
   * The live session behind the request's Authorization: Bearer token (401 otherwise), allowed to
   * call `route` (Elysia's pattern of the route called): 403 forbidden_role with required_role when
   * the member's role does not reach it, 403 mfa_enrollment_required while the tenant requires a
   * second factor the person has not turned on (only enrolling, and their own account, stay open).
   */
  async require(request: Request, route: string): Promise<Session> {
    const session = await this.ofRequest(request);
    noteCaller(request, session.tenant_id);
    const needed = requiredRole(request.method, route);
    if (!roleAtLeast(session.role, needed)) {
      throw new AppError("forbidden_role", `This needs the ${needed} role (or a wider one); you are ${article(session.role)} ${session.role} of this tenant.`, { fields: { required_role: needed } });
    }
    if (session.require_mfa && !session.mfa_active && !OPEN_WITHOUT_MFA.has(`${request.method.toUpperCase()} ${route}`)) {
      throw new AppError("mfa_enrollment_required", "This tenant requires a second factor: turn one on (Account) before anything else.");
    }
    return session;
  }

  /** The live session behind the request's Authorization: Bearer token, or 401; no role is checked. */
  async ofRequest(request: Request): Promise<Session & { require_mfa: boolean }> {
    const header = request.headers.get("authorization");
    if (!header) throw new AppError("unauthorized", "Send Authorization: Bearer <token>.");
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
    if (!match) throw new AppError("unauthorized");
    return this.authenticate(match[1]);
  }

  /** The live session behind a bearer token, or 401. */
  async authenticate(token: string): Promise<Session & { require_mfa: boolean }> {
    const { sub, sep, jti, exp, tid, mid, mep } = await this.verified(token, AUDIENCE);
    if (typeof tid !== "string" || typeof mid !== "string" || typeof mep !== "number") throw new AppError("unauthorized");
    const row = await this.db.one("accounts/session", [tid, mid, sub, jti]);
    // A token from before a password reset or change carries an older person epoch, one from before a
    // role change an older member epoch; a signed-out one is listed; a removed member has no row.
    if (!row || row.tenant_id !== tid || row.account_epoch !== sep || row.member_epoch !== mep || row.signed_out || !isRole(row.role)) {
      throw new AppError("unauthorized");
    }
    return {
      tenant_id: row.tenant_id, plan: row.plan, account_id: row.account_id, member_id: row.member_id, role: row.role,
      mfa_active: row.mfa_active, require_mfa: row.require_mfa, jti, expires_at: new Date(exp * 1000),
    };
  }
}

/** What a member without a second factor may still do in a tenant that requires one: enrol, and mind their own account. */
const OPEN_WITHOUT_MFA = new Set([
  "POST /auth/logout", "GET /auth/tenants", "POST /auth/switch", "GET /auth/verify-email/status", "POST /auth/verify-email/request",
  "GET /customer/account", "POST /customer/account/password", "POST /customer/account/mfa/enroll", "POST /customer/account/mfa/confirm",
]);

const article = (role: string) => (/^[aeiou]/.test(role) ? "an" : "a");
