// The mail channel of the outbox: file and SMTP delivery, retries with backoff, permanent
// failures, and the SQL functions behind them. Each test starts and stops its own services, so no other worker
// takes the rows it watches.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import type { Service } from "../../src/app/service.ts";
import { SecretBox } from "../../src/crypto/secret-box.ts";
import type { Queryable } from "../../src/db/index.ts";
import { MAIL } from "../../src/mail/outbox.ts";
import { claimDue, enqueue, markFailedAttempt, markSent } from "../../src/outbox/queue.ts";
import { MAIL_TOKEN_PURPOSE } from "../../src/mail/templates.ts";
import { deadSmtpUrl, mailService, startInbox } from "../helpers/mail.ts";
import { call, GOOD_PASSWORD, testConfig, testService, uniqueEmail } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

type OutboxRow = { id: number; kind: string; status: string; attempts: number; data: Record<string, unknown>; last_error: string | null; next_attempt_at: string; sent_at: string | null };

async function outbox(email: string): Promise<OutboxRow[]> {
  const { db } = await testService();
  return testQuery<OutboxRow>(db, "mail_outbox", [email]);
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

async function withService<T>(service: Service, fn: (s: Service) => Promise<T>): Promise<T> {
  try {
    return await fn(service);
  } finally {
    await service.close();
  }
}

/** A mail service on the shared database that delivers to DATA_DIR/outbox in a temporary folder, removed after. */
async function withFileOutbox<T>(fn: (service: Service, dataDir: string) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), "warden-outbox-"));
  const { db } = await testService();
  try {
    return await withService(await mailService(db, { dataDir }), (service) => fn(service, dataDir));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const RETRY = MAIL.retry;
const enqueueMail = (q: Queryable, kind: string, to: string, data: Record<string, unknown>) => enqueue(q, "mail", kind, to, null, data);

const secondsFromNow = (iso: string) => (Date.parse(iso) - Date.now()) / 1000;

describe("file outbox (no SMTP_URL)", () => {
  test("writes DATA_DIR/outbox/<id>.eml: an RFC 5322 message with text and HTML parts", async () => {
    await withFileOutbox(async (service, dataDir) => {
      const email = uniqueEmail("file");
      expect((await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD }, service })).status).toBe(201);
      const [row] = await outbox(email);
      const file = join(dataDir, "outbox", `${row.id}.eml`);
      await until("the .eml file", async () => existsSync(file));
      const raw = readFileSync(file);
      // CRLF line ends, as RFC 5322 wants.
      expect(raw.toString("latin1").split("\n").slice(0, -1).every((line) => line.endsWith("\r"))).toBe(true);
      const parsed = await simpleParser(raw);
      expect(parsed.subject).toMatch(/confirm/i);
      expect(parsed.messageId).toMatch(new RegExp(`^<outbox\\.${row.id}@`));
      expect(parsed.from?.text).toContain(testConfig().mailFrom.replace(/^.*</, "").replace(/>$/, ""));
      expect(parsed.to && "text" in parsed.to ? parsed.to.text : "").toBe(email);
      expect(parsed.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
      const token = /\/console\/verify\?token=([A-Za-z0-9_-]{43})/.exec(parsed.text ?? "")?.[1];
      expect(token).toBeDefined();
      expect(String(parsed.html)).toContain(`/console/verify?token=${token}`);
      expect((await call("POST", "/auth/verify-email/confirm", { json: { token } })).status).toBe(200);
      await until("the row marked sent", async () => (await outbox(email))[0].status === "sent");
      expect(readdirSync(join(dataDir, "outbox")).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    });
  });
});

describe("sealed link tokens", () => {
  test("a token sealed under another service secret (JWT_SECRET changed) fails its row at once, without sending", async () => {
    const { db } = await testService();
    await withFileOutbox(async (service, dataDir) => {
      const email = uniqueEmail("sealed");
      const other = await SecretBox.derive("another service secret, 32 characters or more", MAIL_TOKEN_PURPOSE);
      await enqueueMail(db, "verify_email", email, { token_sealed: await other.seal("a-token", "verify_email") });
      service.deps.mail.nudge();
      const [row] = await until("the row failed", async () => {
        const rows = await outbox(email);
        return rows[0]?.status === "failed" ? rows : undefined;
      });
      expect(row).toMatchObject({ attempts: 1, data: {} });
      expect(row.last_error).toContain("does not open");
      expect(existsSync(join(dataDir, "outbox", `${row.id}.eml`))).toBe(false);
    });
  });
});

describe("retries", () => {
  test("with the SMTP server down the request still succeeds and the message waits, with backoff", async () => {
    const { db } = await testService();
    await withService(await mailService(db, { smtpUrl: await deadSmtpUrl() }), async (service) => {
      const email = uniqueEmail("down");
      const started = performance.now();
      expect((await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD }, service })).status).toBe(201);
      expect(performance.now() - started).toBeLessThan(2000);
      const [row] = await until("a failed attempt", async () => {
        const rows = await outbox(email);
        return rows[0]?.last_error ? rows : undefined;
      });
      expect(row).toMatchObject({ status: "pending", attempts: 1, sent_at: null });
      // The link's token waits sealed, never as it is; the service opens it to a live token.
      expect(Object.keys(row.data)).toEqual(["token_sealed"]);
      const token = await service.deps.mailTokens.open(String(row.data.token_sealed), "verify_email");
      expect(JSON.stringify(row)).not.toContain(token);
      expect(await db.query("accounts/token_check", [token, "verify_email", new Date()])).toEqual([{ outcome: "valid" }]);
      expect(secondsFromNow(row.next_attempt_at)).toBeGreaterThan(RETRY.baseSeconds - 5);
      expect(secondsFromNow(row.next_attempt_at)).toBeLessThanOrEqual(RETRY.baseSeconds + 1);
    });
  });

  test("an address the server refuses (550) fails at once and its data is emptied", async () => {
    const { db } = await testService();
    const email = uniqueEmail("refused");
    const inbox = await startInbox({ rejects: (a) => a === email });
    try {
      await withService(await mailService(db, { smtpUrl: inbox.url }), async (service) => {
        expect((await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD }, service })).status).toBe(201);
        const [row] = await until("the row failed", async () => {
          const rows = await outbox(email);
          return rows[0]?.status === "failed" ? rows : undefined;
        });
        expect(row).toMatchObject({ attempts: 1, data: {} });
        expect(row.last_error).toContain("550");
      });
    } finally {
      await inbox.close();
    }
  });

  test("an unknown kind is retried with a clear error, and fails once the attempts run out", async () => {
    const { db } = await testService();
    const email = uniqueEmail("unknown-kind");
    const id = await enqueueMail(db, "no_such_template", email, { note: "kept until final" });
    const inbox = await startInbox();
    try {
      await withService(await mailService(db, { smtpUrl: inbox.url }), async () => {
        const [row] = await until("a failed attempt", async () => {
          const rows = await outbox(email);
          return rows[0]?.last_error ? rows : undefined;
        });
        expect(row).toMatchObject({ id, status: "pending", attempts: 1, last_error: "unknown mail kind: no_such_template", data: { note: "kept until final" } });
        await testQuery(db, "mail_outbox_set_attempts", [id, RETRY.maxAttempts - 1]);
        await testQuery(db, "mail_outbox_make_due", [email]);
        const [final] = await until("the row failed", async () => {
          const rows = await outbox(email);
          return rows[0]?.status === "failed" ? rows : undefined;
        });
        expect(final).toMatchObject({ attempts: RETRY.maxAttempts, data: {}, last_error: "unknown mail kind: no_such_template" });
      });
      expect(inbox.to(email)).toEqual([]);
    } finally {
      await inbox.close();
    }
  });
});

describe("outbox functions", () => {
  test("backoff doubles from the base and stops at the cap; the last attempt fails the row", async () => {
    const { db } = await testService();
    const email = uniqueEmail("backoff");
    const id = await enqueueMail(db, "verify_email", email, { token_sealed: "x" });
    for (const [attempts, seconds] of [[1, 30], [2, 60], [5, 480], [8, 3600], [9, 3600]] as const) {
      await testQuery(db, "mail_outbox_set_attempts", [id, attempts]);
      expect(await markFailedAttempt(db, MAIL, id, "boom", false)).toBe("pending");
      const [row] = await outbox(email);
      expect(Math.abs(secondsFromNow(row.next_attempt_at) - seconds)).toBeLessThan(3);
      expect(row.last_error).toBe("boom");
    }
    await testQuery(db, "mail_outbox_set_attempts", [id, RETRY.maxAttempts]);
    expect(await markFailedAttempt(db, MAIL, id, "x".repeat(2000), false)).toBe("failed");
    const [row] = await outbox(email);
    expect(row).toMatchObject({ status: "failed", data: {} });
    expect(row.last_error).toHaveLength(1000);
    // A finished row no longer moves.
    expect(await markFailedAttempt(db, MAIL, id, "again", false)).toBeNull();
    await markSent(db, id);
    expect((await outbox(email))[0].status).toBe("failed");
  });

  test("sent empties the data and records the time, once", async () => {
    const { db } = await testService();
    const email = uniqueEmail("sent");
    const id = await enqueueMail(db, "reset_password", email, { token_sealed: "sealed-token-value" });
    await markSent(db, id);
    const [row] = await outbox(email);
    expect(row).toMatchObject({ status: "sent", data: {}, last_error: null });
    expect(row.sent_at).toMatch(/Z$/);
    expect(await db.one("outbox/sent", [id])).toEqual({ updated: false });
  });

  test("two parallel claims never take the same row", async () => {
    const { db } = await testService();
    const emails = Array.from({ length: 12 }, () => uniqueEmail("claim"));
    for (const email of emails) await enqueueMail(db, "verify_email", email, { token_sealed: "x" });
    const [a, b] = await Promise.all([claimDue(db, MAIL, 50), claimDue(db, MAIL, 50)]);
    try {
      const ids = [...a, ...b].map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      // A claimed row is leased: it is not due again at once.
      const again = await claimDue(db, MAIL, 1000);
      await testQuery(db, "mail_outbox_release", [again.map((r) => r.id)]);
      expect(again.map((r) => r.id).filter((id) => ids.includes(id))).toEqual([]);
    } finally {
      await testQuery(db, "mail_outbox_release", [[...a, ...b].map((r) => r.id)]);
    }
    for (const email of emails) {
      const [row] = await outbox(email);
      await markFailedAttempt(db, MAIL, row.id, "test row", true);
    }
  });
});
