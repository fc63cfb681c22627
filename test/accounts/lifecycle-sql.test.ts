// The lifecycle's SQL functions called directly (migration 003): their refusals by SQLSTATE and
// the state they leave. Each test runs in a transaction that is rolled back.
import { describe, expect, test } from "bun:test";
import { DbError, type Queryable } from "../../src/db/index.ts";
import { newId } from "../../src/ids.ts";
import { hashSecret, newSecret, secretHint } from "../../src/keys/secret.ts";
import { newToken } from "../../src/accounts/tokens.ts";
import { testService, uniqueEmail } from "../helpers/service.ts";
import { rolledBackIn, sqlstate, testQuery } from "../helpers/sql.ts";

const PASSWORD_HASH = "$2b$04$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234";
const OTHER_HASH = "$2b$04$zyxwvutsrqponmlkjihgfeABCDEFGHIJKLMNOPQRSTUVWXYZ01234";
const NOW = new Date("2030-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
const HOUR = 3600_000;


const rolledBack = async (fn: (q: Queryable) => Promise<void>) => rolledBackIn((await testService()).db, fn);


/** A tenant and its owner; the lifecycle below is the person's (accountId). */
async function tenant(q: Queryable): Promise<{ tenantId: string; accountId: string; memberId: string; email: string }> {
  const tenantId = newId("cust_");
  const accountId = newId("acct_");
  const memberId = newId("mbr_");
  const email = uniqueEmail("sql");
  const secret = newSecret();
  await q.query("accounts/signup", [tenantId, accountId, memberId, email, PASSWORD_HASH, newId("key_"), await hashSecret(secret), secretHint(secret)]);
  return { tenantId, accountId, memberId, email };
}

type TokenRow = { token_hash: string; purpose: string; status: string };

/** Stands in for a token the service sealed (src/accounts/lifecycle.ts): the SQL keeps it as given. */
const sealed = (token: string) => `v1.AAAAAAAAAAAAAAAA.${token}`;

/** The messages queued for an address, as the sender takes them (inside a rolled-back transaction). */
async function queuedFor(q: Queryable, email: string): Promise<{ kind: string; data: Record<string, unknown> }[]> {
  const claimed = await q.query("outbox/claim", ["mail", 100000, 60]);
  return claimed.filter((m) => m.recipient === email) as { kind: string; data: Record<string, unknown> }[];
}

describe("tokens", () => {
  test("auth_token_take refuses by SQLSTATE: WA001 unknown or superseded, WA002 expired, WA003 used", async () => {
    // Each refusal aborts its transaction, so each gets its own.
    const token = newToken();
    const setup = async (q: Queryable) => {
      const t = await tenant(q);
      await q.query("accounts/verification_issue", [t.accountId, token, sealed(token), NOW.toISOString()]);
      return t;
    };
    await rolledBack(async (q) => {
      await setup(q);
      expect(await sqlstate(q.query("accounts/verification_confirm", [newToken(), at(0)]))).toBe("WA001");
    });
    await rolledBack(async (q) => {
      await setup(q);
      expect(await sqlstate(q.query("accounts/verification_confirm", [token, at(24 * HOUR)]))).toBe("WA002");
    });
    await rolledBack(async (q) => {
      await setup(q);
      expect(await q.query("accounts/verification_confirm", [token, at(24 * HOUR - 1)])).toEqual([{ account_id: expect.any(String), verified_at: at(24 * HOUR - 1) }]);
      expect(await sqlstate(q.query("accounts/verification_confirm", [token, at(24 * HOUR - 1)]))).toBe("WA003");
    });
    await rolledBack(async (q) => {
      const t = await setup(q);
      await q.query("accounts/verification_issue", [t.accountId, newToken(), sealed(newToken()), at(1)]);
      expect(await sqlstate(q.query("accounts/verification_confirm", [token, at(2)]))).toBe("WA001");
    });
  });

  test("only the SHA-256 is stored; one live verification token per tenant", async () => {
    // Committed, for a tenant of its own, so the stored rows can be read as they are.
    const { db } = await testService();
    const t = await tenant(db);
    const tokens = [newToken(), newToken(), newToken()];
    for (const [i, token] of tokens.entries()) {
      expect((await db.one("accounts/verification_issue", [t.accountId, token, sealed(token), at(i)]))?.mail_id).toEqual(expect.any(Number));
    }
    const rows = await testQuery<TokenRow>(db, "auth_tokens", [t.accountId]);
    expect(rows.map((r) => [r.token_hash, r.status])).toEqual(
      await Promise.all(tokens.map(async (token, i) => [await hashSecret(token), i === 2 ? "active" : "superseded"])),
    );
    expect(await db.query("accounts/token_check", [tokens[0], "verify_email", at(5)])).toEqual([{ outcome: "invalid_token" }]);
    expect(await db.query("accounts/token_check", [tokens[2], "verify_email", at(5)])).toEqual([{ outcome: "valid" }]);
    expect(await db.query("accounts/token_check", [tokens[2], "reset_password", at(5)])).toEqual([{ outcome: "invalid_token" }]);
    expect(await db.query("accounts/token_check", [tokens[2], "verify_email", at(24 * HOUR + 2)])).toEqual([{ outcome: "token_expired" }]);
    // The queued message holds the token only as the service sealed it; the raw token is nowhere.
    await rolledBack(async (q) => {
      const u = await tenant(q);
      const queued = [newToken(), newToken()];
      for (const [i, token] of queued.entries()) await q.query("accounts/verification_issue", [u.accountId, token, sealed(token), at(i)]);
      expect((await queuedFor(q, u.email)).map((m) => [m.kind, m.data])).toEqual(queued.map((token) => ["verify_email", { token_sealed: sealed(token) }]));
      // And no writer can queue one as it is.
      const raw = await q.query("outbox/enqueue", ["mail", "verify_email", u.email, u.tenantId, { token: queued[0] }]).then(() => undefined, (e: DbError) => e);
      expect([raw?.sqlstate, raw?.constraint]).toEqual(["23514", "outbox_no_raw_token"]);
    });
  });

  test("a verified address gets no new token or mail", async () => {
    await rolledBack(async (q) => {
      const t = await tenant(q);
      const token = newToken();
      await q.query("accounts/verification_issue", [t.accountId, token, sealed(token), at(0)]);
      await q.query("accounts/verification_confirm", [token, at(1)]);
      expect(await q.query("accounts/verification_issue", [t.accountId, newToken(), sealed(newToken()), at(2)])).toEqual([{ mail_id: null }]);
      expect(await queuedFor(q, t.email)).toHaveLength(1);
    });
  });
});

describe("reset and change", () => {
  test("reset: nothing for an unknown address; confirm sets the hash, bumps the epoch, kills the other reset tokens", async () => {
    await rolledBack(async (q) => {
      expect(await q.query("accounts/reset_request", [uniqueEmail("ghost"), newToken(), sealed(newToken()), at(0)])).toEqual([]);
      const t = await tenant(q);
      const [first, second] = [newToken(), newToken()];
      expect(await q.query("accounts/reset_request", [t.email, first, sealed(first), at(0)])).toEqual([{ account_id: t.accountId, tenant_id: t.tenantId, mail_id: expect.any(Number) }]);
      await q.query("accounts/reset_request", [t.email, second, sealed(second), at(1)]);
      expect(await q.query("accounts/reset_confirm", [second, OTHER_HASH, at(2)])).toEqual([{ account_id: t.accountId, session_epoch: 1 }]);
      // The first is superseded by the completed reset, the second used.
      expect(await q.query("accounts/token_check", [first, "reset_password", at(3)])).toEqual([{ outcome: "invalid_token" }]);
      expect(await q.query("accounts/token_check", [second, "reset_password", at(3)])).toEqual([{ outcome: "token_used" }]);
      expect(await q.query("accounts/credentials", [t.accountId])).toEqual([{ email: t.email, password_hash: OTHER_HASH }]);
      expect(await q.query("accounts/verification_status", [t.accountId])).toEqual([{ email: t.email, email_verified: true, verified_at: at(2) }]);
    });
  });

  test("password_change is a compare-and-set: WA004 when the hash moved on", async () => {
    await rolledBack(async (q) => {
      const t = await tenant(q);
      const reset = newToken();
      await q.query("accounts/reset_request", [t.email, reset, sealed(reset), at(0)]);
      expect(await q.query("accounts/password_change", [t.accountId, PASSWORD_HASH, OTHER_HASH, at(1)])).toEqual([{ session_epoch: 1 }]);
      expect(await q.query("accounts/token_check", [reset, "reset_password", at(2)])).toEqual([{ outcome: "invalid_token" }]);
    });
    await rolledBack(async (q) => {
      const t = await tenant(q);
      expect(await sqlstate(q.query("accounts/password_change", [t.accountId, OTHER_HASH, PASSWORD_HASH, at(1)]))).toBe("WA004");
    });
  });
});

describe("rate_limit_hit", () => {
  test("counts within a fixed window, says how long is left, and starts over when it ends", async () => {
    await rolledBack(async (q) => {
      const bucket = `test:${newToken()}`;
      const hit = (ms: number) => q.one("accounts/rate_limit_hit", [bucket, 2, 60, at(ms)]);
      expect(await hit(0)).toEqual({ allowed: true, hits: 1, retry_after: 60 });
      expect(await hit(10_000)).toEqual({ allowed: true, hits: 2, retry_after: 50 });
      expect(await hit(59_500)).toEqual({ allowed: false, hits: 3, retry_after: 1 });
      expect(await hit(60_000)).toEqual({ allowed: true, hits: 1, retry_after: 60 });
    });
  });
});

describe("second factor", () => {
  const SEALED = "v1.AAAAAAAAAAAAAAAA.c2VhbGVkLXNlY3JldA"; // the shape src/crypto/secret-box.ts writes
  const hashes = (n = 10) => Array.from({ length: n }, (_, i) => `${i}`.padStart(64, "a"));
  const state = async (q: Queryable, tenantId: string) =>
    (await q.query("accounts/mfa_secret", [tenantId]))[0] as { status: string; last_step: number } | undefined;
  const active = async (q: Queryable) => {
    const t = await tenant(q);
    await q.query("accounts/mfa_enroll", [t.accountId, SEALED, NOW.toISOString()]);
    await q.query("accounts/mfa_confirm", [t.accountId, 100, hashes(), NOW.toISOString()]);
    return t;
  };

  test("pending -> active -> disabled; enrolling again starts over", async () => {
    await rolledBack(async (q) => {
      const t = await tenant(q);
      await q.query("accounts/mfa_enroll", [t.accountId, SEALED, NOW.toISOString()]);
      expect(await state(q, t.accountId)).toMatchObject({ status: "pending", last_step: -1 });
      await q.query("accounts/mfa_confirm", [t.accountId, 100, hashes(), NOW.toISOString()]);
      expect(await state(q, t.accountId)).toMatchObject({ status: "active", last_step: 100 });
      await q.query("accounts/mfa_disable", [t.accountId, NOW.toISOString()]);
      expect(await state(q, t.accountId)).toMatchObject({ status: "disabled" });
      await q.query("accounts/mfa_enroll", [t.accountId, SEALED, NOW.toISOString()]);
      expect(await state(q, t.accountId)).toMatchObject({ status: "pending", last_step: -1 });
    });
  });

  test("refusals by SQLSTATE: WA011 enrolling while active, WA012 confirming nothing pending, WA010 disabling nothing", async () => {
    await rolledBack(async (q) => {
      const t = await active(q);
      expect(await sqlstate(q.query("accounts/mfa_enroll", [t.accountId, SEALED, NOW.toISOString()]))).toBe("WA011");
    });
    await rolledBack(async (q) => {
      const t = await tenant(q);
      expect(await sqlstate(q.query("accounts/mfa_confirm", [t.accountId, 1, hashes(), NOW.toISOString()]))).toBe("WA012");
    });
    await rolledBack(async (q) => {
      const t = await tenant(q);
      expect(await sqlstate(q.query("accounts/mfa_disable", [t.accountId, NOW.toISOString()]))).toBe("WA010");
    });
  });

  test("a TOTP step is accepted once and never an earlier one", async () => {
    await rolledBack(async (q) => {
      const t = await active(q);
      await q.query("accounts/mfa_accept_code", [t.accountId, 101, null, NOW.toISOString()]);
      expect(await state(q, t.accountId)).toMatchObject({ last_step: 101 });
    });
    for (const step of [100, 99]) {
      await rolledBack(async (q) => {
        const t = await active(q);
        expect(await sqlstate(q.query("accounts/mfa_accept_code", [t.accountId, step, null, NOW.toISOString()]))).toBe("WA010");
      });
    }
  });

  test("a recovery code works once, only for its own tenant, only while the factor is active", async () => {
    const [code] = hashes(1);
    await rolledBack(async (q) => {
      const t = await active(q);
      await q.query("accounts/mfa_accept_code", [t.accountId, null, code, NOW.toISOString()]);
      expect(await sqlstate(q.query("accounts/mfa_accept_code", [t.accountId, null, code, NOW.toISOString()]))).toBe("WA010");
    });
    await rolledBack(async (q) => {
      await active(q);
      const other = await active(q).catch(() => undefined);
      // Two tenants cannot hold the same code hash (primary key): the second confirm fails.
      expect(other).toBeUndefined();
    });
    await rolledBack(async (q) => {
      const t = await tenant(q);
      await q.query("accounts/mfa_enroll", [t.accountId, SEALED, NOW.toISOString()]);
      expect(await sqlstate(q.query("accounts/mfa_accept_code", [t.accountId, 5, null, NOW.toISOString()]))).toBe("WA010");
    });
  });
  test("new recovery codes: ten replace every earlier one, only while the factor is active", async () => {
    const fresh = Array.from({ length: 10 }, (_, i) => `${i}`.padStart(64, "b"));
    await rolledBack(async (q) => {
      const t = await active(q);
      await q.query("accounts/mfa_recovery_replace", [t.accountId, fresh]);
      await q.query("accounts/mfa_accept_code", [t.accountId, null, fresh[0], NOW.toISOString()]);
      expect(await sqlstate(q.query("accounts/mfa_accept_code", [t.accountId, null, hashes(1)[0], NOW.toISOString()]))).toBe("WA010");
    });
    await rolledBack(async (q) => {
      const t = await active(q);
      expect(await sqlstate(q.query("accounts/mfa_recovery_replace", [t.accountId, fresh.slice(0, 9)]))).toBe("22023");
    });
    await rolledBack(async (q) => {
      const t = await tenant(q);
      await q.query("accounts/mfa_enroll", [t.accountId, SEALED, NOW.toISOString()]);
      expect(await sqlstate(q.query("accounts/mfa_recovery_replace", [t.accountId, fresh]))).toBe("WA010");
    });
  });

  test("sealing again (a new JWT_SECRET) is a compare-and-set on the sealed value", async () => {
    const resealed = "v1.BBBBBBBBBBBBBBBB.c2VhbGVkLWFnYWlu";
    await rolledBack(async (q) => {
      const t = await active(q);
      expect(await q.query("accounts/mfa_reseal", [t.accountId, "v1.CCCCCCCCCCCCCCCC.b3RoZXI", resealed])).toEqual([]);
      expect(await q.query("accounts/mfa_reseal", [t.accountId, SEALED, resealed])).toEqual([{ account_id: t.accountId }]);
      expect((await q.query("accounts/mfa_secret", [t.accountId]))[0]).toMatchObject({ status: "active", secret_sealed: resealed });
      // A bare secret is refused by the column's CHECK, whoever writes it.
      expect(await sqlstate(q.query("accounts/mfa_reseal", [t.accountId, resealed, "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"]))).toBe("23514");
    });
  });
});

describe("sign-out and login counters", () => {
  test("session_revoke marks one jti; the session query reports it", async () => {
    await rolledBack(async (q) => {
      const t = await tenant(q);
      const jti = "A".repeat(22);
      await q.query("accounts/session_revoke", [t.accountId, jti, at(HOUR), NOW.toISOString()]);
      expect((await q.query("accounts/session", [t.tenantId, t.memberId, t.accountId, jti]))[0].signed_out).toBe(true);
      expect((await q.query("accounts/session", [t.tenantId, t.memberId, t.accountId, "B".repeat(22)]))[0].signed_out).toBe(false);
    });
  });

  test("rate_limit_clear forgets a subject's bucket and its per-address buckets, nothing else", async () => {
    await rolledBack(async (q) => {
      const subject = `login:${"c".repeat(64)}`;
      for (const bucket of [subject, `${subject}:10.0.0.1`, `${subject}:2001:db8::/64`, `${subject}x`, `login:${"d".repeat(64)}`]) {
        await q.query("accounts/rate_limit_hit", [bucket, 10, 60, NOW.toISOString()]);
      }
      expect((await q.query("accounts/rate_limit_clear", [subject]))[0].cleared).toBe(3);
      expect((await q.query("accounts/rate_limit_hit", [`${subject}x`, 10, 60, NOW.toISOString()]))[0].hits).toBe(2);
      expect((await q.query("accounts/rate_limit_hit", [subject, 10, 60, NOW.toISOString()]))[0].hits).toBe(1);
    });
  });
});
