// Races: 20 parallel attempts at something that may happen once, repeated, each round on fresh
// state. Exactly one winner every time, the losers get the documented refusal, and the state
// afterwards is the winner's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DbError } from "../../src/db/index.ts";
import type { Service } from "../../src/app/service.ts";
import { bearer, requestResetToken, signupWithMail } from "../helpers/accounts.ts";
import { apiKey, execute, pool, protect, setUsage } from "../helpers/customer.ts";
import { closeMailFixture, openMailFixture, type Inbox } from "../helpers/mail.ts";
import { approve, planOf } from "../helpers/ops.ts";
import { call, logLines, signup, type Reply } from "../helpers/service.ts";
import { expectCleanError, expectNoSecretIn, remember } from "./helpers.ts";

const PARALLEL = 20;
const ROUNDS = Number(process.env.RACE_ROUNDS ?? 5);

let inbox: Inbox;
let mailer: Service;
beforeAll(async () => ({ inbox, service: mailer } = await openMailFixture()));
afterAll(() => closeMailFixture({ inbox, service: mailer }));

async function tenant() {
  const t = await signup();
  for (const s of [t.password, t.token, t.apiKey]) remember(s);
  return t;
}

/** Fires `PARALLEL` attempts at once; returns the winners and the losers. */
async function race(attempt: (i: number) => Promise<Reply>, won: (r: Reply) => boolean) {
  const replies = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => attempt(i)));
  return { winners: replies.filter(won), losers: replies.filter((r) => !won(r)) };
}

function expectOneWinner(result: { winners: Reply[]; losers: Reply[] }, status: number, error: string): void {
  expect(result.winners).toHaveLength(1);
  for (const r of result.losers) expectCleanError(r, status, error);
}

describe(`${PARALLEL} parallel attempts, ${ROUNDS} rounds each: exactly one winner`, () => {
  test("one verification token redeemed", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const user = await signupWithMail(mailer, inbox, undefined, "race-verify");
      for (const s of [user.token, user.apiKey, user.verifyToken]) remember(s);
      const result = await race(() => call("POST", "/auth/verify-email/confirm", { json: { token: user.verifyToken } }), (r) => r.status === 200);
      expectOneWinner(result, 400, "token_used");
      expect((await call("GET", "/auth/verify-email/status", { headers: bearer(user.token) })).body.email_verified).toBe(true);
    }
  }, 60_000);

  test("one reset token redeemed, each attempt with its own new password", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const user = await signupWithMail(mailer, inbox, undefined, "race-reset");
      for (const s of [user.token, user.apiKey, user.verifyToken]) remember(s);
      const token = remember(await requestResetToken(mailer, inbox, user.email));
      const passwords = Array.from({ length: PARALLEL }, (_, i) => remember(`racing passphrase number ${i} of ${round}`));
      const replies = await Promise.all(passwords.map((password) => call("POST", "/auth/reset-password/confirm", { json: { token, password } })));
      const winners = replies.flatMap((r, i) => (r.status === 200 ? [i] : []));
      expect(winners).toHaveLength(1);
      for (const r of replies.filter((r) => r.status !== 200)) expectCleanError(r, 400, "token_used");
      // The winner's password is the one that works; no loser's does.
      for (const [i, password] of passwords.entries()) {
        const login = await call("POST", "/auth/login", { json: { email: user.email, password } });
        expect(login.status).toBe(i === winners[0] ? 200 : 401);
      }
    }
  }, 60_000);

  test("one key rotated", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = await tenant();
      const key = (await call("POST", "/customer/keys", { json: { label: "race" }, headers: bearer(t.token) })).body;
      remember(key.secret);
      const result = await race(() => call("POST", `/customer/keys/${key.key_id}/rotate`, { headers: bearer(t.token) }), (r) => r.status === 201);
      expectOneWinner(result, 409, "key_not_active");
      remember(result.winners[0].body.secret);
      const keys = (await call("GET", "/customer/keys", { headers: bearer(t.token) })).body.keys as { key_id: string; label: string; status: string }[];
      // The first key, its one successor and the signup key: no second successor was made.
      expect(keys.filter((k) => k.label === "race").map((k) => k.status).sort()).toEqual(["active", "revoked"]);
      expectCleanError(await protect(key.secret), 401, "key_revoked");
      expect((await protect(result.winners[0].body.secret)).status).toBe(200);
    }
  }, 60_000);

  test("one upgrade request approved by operators and cancelled by its tenant at once", async () => {
    const outcomes = { approved: 0, cancelled: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const t = await tenant();
      const request = (await call("POST", "/customer/upgrades/request", { json: { requested_plan: "pro", reason: "race" }, headers: bearer(t.token) })).body.request_id as string;
      // Half of the attempts are operator approvals (the sql/ops script), half customer cancels;
      // which kind is sent first alternates by round.
      const attempts = await Promise.all(
        Array.from({ length: PARALLEL }, async (_, i) => {
          if ((i + round) % 2) return { kind: "cancel", reply: await call("POST", `/customer/upgrades/${request}/cancel`, { headers: bearer(t.token) }) } as const;
          return approve(request).then(
            () => ({ kind: "approve", ok: true }) as const,
            (err: unknown) => ({ kind: "approve", ok: false, err }) as const,
          );
        }),
      );
      const approvals = attempts.filter((a) => a.kind === "approve" && a.ok);
      const cancels = attempts.filter((a) => a.kind === "cancel" && a.reply.status === 200);
      expect(approvals.length + cancels.length).toBe(1);
      for (const a of attempts) {
        if (a.kind === "cancel" && a.reply.status !== 200) expectCleanError(a.reply, 409, "not_pending");
        if (a.kind === "approve" && !a.ok) expect((a.err as DbError).sqlstate).toBe("WU002");
      }
      const status = (await call("GET", "/customer/upgrades", { headers: bearer(t.token) })).body.upgrades[0].status;
      const plan = await planOf(t.tenantId);
      if (approvals.length) {
        outcomes.approved++;
        expect([status, plan]).toEqual(["approved", "pro"]);
      } else {
        outcomes.cancelled++;
        expect([status, plan]).toEqual(["cancelled", "free"]);
      }
    }
    expect(outcomes.approved + outcomes.cancelled).toBe(ROUNDS);
  }, 60_000);

  test("one protect receipt executed", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = await tenant();
      const decided = (await protect(t.apiKey)).body;
      expect(decided.decision).toBe("ALLOWED");
      const result = await race(() => execute(t.apiKey, decided.receipt_id), (r) => r.status === 200);
      expectOneWinner(result, 409, "already_executed");
      const receipts = (await call("GET", "/customer/receipts", { headers: bearer(t.token) })).body.receipts as { kind: string }[];
      // The signup's key.created event, the protect and one execute.
      expect(receipts.map((r) => r.kind).sort()).toEqual(["event", "execute", "protect"]);
    }
  }, 60_000);

  test("the daily protect quota at its last unit", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = await tenant();
      await setUsage(t.tenantId, 999, 0); // free: 1,000 a day
      const result = await race(() => protect(t.apiKey), (r) => r.status === 200);
      expect(result.winners).toHaveLength(1);
      for (const r of result.losers) {
        expectCleanError(r, 429, "quota_exceeded");
        expect(r.body.limit).toBe("protect_per_day");
        expect(r.headers.get("ratelimit-remaining")).toBe("0");
      }
      const dashboard = (await call("GET", "/customer/dashboard", { headers: bearer(t.token) })).body;
      expect(dashboard.usage).toMatchObject({ protect_today: 1000, receipts_stored: 1 });
    }
  }, 60_000);

  test("the daily execute quota at its last unit", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = await tenant();
      const receipts = await pool(PARALLEL, 5, async () => (await protect(t.apiKey)).body.receipt_id as string);
      await setUsage(t.tenantId, PARALLEL, 99); // free: 100 a day
      const replies = await Promise.all(receipts.map((id) => call("POST", "/v1/execute", { json: { receipt_id: id }, headers: apiKey(t.apiKey) })));
      expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of replies.filter((r) => r.status !== 200)) {
        expectCleanError(r, 429, "quota_exceeded");
        expect(r.body.limit).toBe("execute_per_day");
      }
    }
  }, 60_000);
});

test("no password, token, JWT or key used here reaches a log line", () => {
  expectNoSecretIn(logLines);
});
