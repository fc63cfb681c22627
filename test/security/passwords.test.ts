// Password rules at every place a password is set (signup, reset, change): 8 to 256 characters
// counted as characters, the most common passwords refused whatever their case, any composition
// allowed, and bcrypt's 72-byte limit never making two different passwords equal.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dictionary } from "@zxcvbn-ts/language-common";
import type { Service } from "../../src/app/service.ts";
import { bearer, requestResetToken, signupWithMail } from "../helpers/accounts.ts";
import { closeMailFixture, openMailFixture, type Inbox } from "../helpers/mail.ts";
import { call, logLines, signup, uniqueEmail, type Reply } from "../helpers/service.ts";
import { expectCleanError, expectNoSecretIn, remember } from "./helpers.ts";

let inbox: Inbox;
let mailer: Service;
beforeAll(async () => ({ inbox, service: mailer } = await openMailFixture()));
afterAll(() => closeMailFixture({ inbox, service: mailer }));

const login = (email: string, password: string) => call("POST", "/auth/login", { json: { email, password } });
const bytes = (s: string) => new TextEncoder().encode(s).length;

/** The three ways to set a password; each returns the reply and the email whose password it set. */
type Setter = (password: string) => Promise<{ reply: Reply; email: string }>;
const setters: Record<string, () => Promise<Setter>> = {
  async signup() {
    return async (password) => {
      const email = uniqueEmail("pw");
      const reply = await call("POST", "/auth/signup", { json: { email, password } });
      if (reply.status === 201) for (const s of [reply.body.token, reply.body.api_key]) remember(s);
      return { reply, email };
    };
  },
  async reset() {
    // One account and one link; a refused password leaves the link usable, so fetch a new one
    // only after a success.
    const user = await signupWithMail(mailer, inbox, undefined, "pw-reset");
    for (const s of [user.token, user.apiKey, user.verifyToken, user.password]) remember(s);
    let token = remember(await requestResetToken(mailer, inbox, user.email));
    return async (password) => {
      const reply = await call("POST", "/auth/reset-password/confirm", { json: { token, password } });
      if (reply.status === 200) token = remember(await requestResetToken(mailer, inbox, user.email));
      return { reply, email: user.email };
    };
  },
  async change() {
    const user = await signup();
    for (const s of [user.token, user.apiKey, user.password]) remember(s);
    let current = user.password;
    let session = user.token;
    return async (password) => {
      const reply = await call("POST", "/customer/account/password", { json: { current_password: current, new_password: password }, headers: bearer(session) });
      if (reply.status === 200) {
        current = password;
        session = remember(reply.body.token as string);
      }
      return { reply, email: user.email };
    };
  },
};

for (const [name, make] of Object.entries(setters)) {
  describe(`${name}: the password rules`, () => {
    let set: Setter;
    beforeAll(async () => {
      set = await make();
    }, 30_000);

    test("7 characters refused, 8 accepted; characters, not bytes or UTF-16 units", async () => {
      expectCleanError((await set(remember("Zq7#kLm"))).reply, 400, "password_too_short");
      expectCleanError((await set("🔒".repeat(7))).reply, 400, "password_too_short");
      for (const ok of ["Zq7#kLm!", "🔒".repeat(8), "é".repeat(8)]) expect((await set(remember(ok))).reply.status).toBeLessThan(300);
    });

    test("256 characters accepted, 257 refused with password_too_long", async () => {
      expect((await set(remember("Zq7#".repeat(64)))).reply.status).toBeLessThan(300);
      expect((await set(remember("🐉".repeat(256)))).reply.status).toBeLessThan(300);
      expectCleanError((await set("Zq7#".repeat(64) + "x")).reply, 400, "password_too_long");
    });

    test("the most common passwords are refused with password_too_common, in any case", async () => {
      // Every 8+ character password of the list's top 10,000 is refused; this samples them,
      // down to the 10,000th (the list is ranked, most common first).
      const top = dictionary["passwords-common"].slice(0, 10_000).filter((p) => [...p].length >= 8);
      const sample = [...top.filter((_, i) => i % 400 === 0), top.at(-1)!];
      for (const common of [...sample, "PASSWORD123", "Qwertyuiop", "iLoveYou1", "Warden2024!", "warden-password"]) {
        expectCleanError((await set(common)).reply, 400, "password_too_common");
      }
    });

    test("any composition is allowed: spaces, symbols, emoji, no class rules", async () => {
      for (const ok of ["all lower case words", "        spaces 8+", "!@#$%^&*()_+", "密码密码密码密码", "ÅÄÖ åäö 🙂"]) {
        expect((await set(remember(ok))).reply.status).toBeLessThan(300);
      }
    });

    test("bcrypt's 72-byte limit: only the exact password logs in", async () => {
      const head = "Q".repeat(71);
      const variants = [head, `${head}a`, `${head}ab`, `${head}ac`, `${"é".repeat(36)}x`, `${"é".repeat(36)}y`];
      expect(variants.map(bytes)).toEqual([71, 72, 73, 73, 73, 73]);
      for (const password of variants) {
        remember(password);
        const { reply, email } = await set(password);
        expect(reply.status).toBeLessThan(300);
        for (const other of variants) {
          const attempt = await login(email, other);
          expect(attempt.status).toBe(other === password ? 200 : 401);
          if (attempt.status === 200) remember(attempt.body.token);
        }
      }
    });

    test("the password is checked exactly as sent: no trimming, no case folding", async () => {
      const password = remember(" Mixed Case Pass ");
      const { email } = await set(password);
      expect((await login(email, password)).status).toBe(200);
      for (const other of ["Mixed Case Pass", " mixed case pass ", " MIXED CASE PASS ", " Mixed Case Pass  "]) {
        expectCleanError(await login(email, other), 401, "unauthorized");
      }
    });
  });
}

test("no password, token, JWT or key used here reaches a log line", () => {
  expectNoSecretIn(logLines);
});
