import { describe, expect, test } from "bun:test";
import { isWellFormedSecret } from "../../src/keys/secret.ts";
import { call, expectErrorShape, GOOD_PASSWORD, signup, subjectOf, uniqueEmail } from "../helpers/service.ts";

describe("POST /auth/signup", () => {
  test("creates a free tenant with a first key and a session", async () => {
    const email = uniqueEmail();
    const reply = await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(["api_key", "email_verified", "member_id", "ok", "role", "tenant_id", "token"]);
    expect(reply.body.ok).toBe(true);
    expect(reply.body.email_verified).toBe(false);
    expect(reply.body.tenant_id).toMatch(/^cust_[0-9A-Za-z]{22}$/);
    // The person who signed up is the tenant's first member, its owner, and the session is theirs.
    expect(reply.body.member_id).toMatch(/^mbr_[0-9A-Za-z]{22}$/);
    expect(reply.body.role).toBe("owner");
    expect(subjectOf(reply.body.token)).toMatchObject({ tenant_id: reply.body.tenant_id, member_id: reply.body.member_id });
    expect(isWellFormedSecret(reply.body.api_key)).toBe(true);
    // The token and the key both work at once.
    const byKey = await call("POST", "/v1/simulate", { json: { preset: "read_document" }, headers: { "x-api-key": reply.body.api_key } });
    expect(byKey.status).toBe(200);
    const byJwt = await call("POST", "/v1/simulate", { json: { preset: "read_document" }, headers: { authorization: `Bearer ${reply.body.token}` } });
    expect(byJwt.status).toBe(200);
  });

  test("every signup gets its own tenant and secret", async () => {
    const [a, b] = await Promise.all([signup(), signup()]);
    expect(a.tenantId).not.toBe(b.tenantId);
    expect(a.apiKey).not.toBe(b.apiKey);
  });

  test("the same email in another case or with spaces is taken", async () => {
    const email = uniqueEmail("Case");
    await signup(email);
    const again = await call("POST", "/auth/signup", { json: { email: `  ${email.toUpperCase()} `, password: GOOD_PASSWORD } });
    expectErrorShape(again, 409, "email_taken");
  });

  test("two parallel signups with one email: exactly one wins", async () => {
    const email = uniqueEmail("race");
    const replies = await Promise.all(Array.from({ length: 5 }, () => call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } })));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectErrorShape(r, 409, "email_taken");
  });

  for (const email of ["", "plain", "@example.com", "a@", "a@b", "a@@example.com", "a b@example.com", "a@exa mple.com", "a@-example.com", "a@example..com", ".a@example.com", "a.@example.com", `${"x".repeat(65)}@example.com`, `a@${"x".repeat(250)}.com`, "a@example.123"]) {
    test(`invalid email ${JSON.stringify(email.length > 30 ? email.slice(0, 30) + "…" : email)}`, async () => {
      expectErrorShape(await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } }), 400, "invalid_email");
    });
  }

  for (const email of ["bot@mailinator.com", "bot@sub.mailinator.com", "bot@10minutemail.com", "bot@GuerrillaMail.com"]) {
    test(`disposable ${email}`, async () => {
      expectErrorShape(await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } }), 400, "disposable_email");
    });
  }

  test("ordinary addresses with plus tags and subdomains are accepted", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    for (const email of [`ops+${tag}@example.com`, `first.last.${tag}@mail.example.co.uk`]) {
      const reply = await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } });
      expect(reply.status).toBe(201);
    }
  });

  test("password length counts characters: 7 too short, 8 and 256 fine, 257 too long", async () => {
    expectErrorShape(await call("POST", "/auth/signup", { json: { email: uniqueEmail(), password: "Zq7#kLm" } }), 400, "password_too_short");
    expect((await call("POST", "/auth/signup", { json: { email: uniqueEmail(), password: "Zq7#kLm!" } })).status).toBe(201);
    expect((await call("POST", "/auth/signup", { json: { email: uniqueEmail(), password: "Zq7#".repeat(64) } })).status).toBe(201);
    expectErrorShape(await call("POST", "/auth/signup", { json: { email: uniqueEmail(), password: "Zq7#".repeat(64) + "x" } }), 400, "password_too_long");
    // Seven emoji are 14 UTF-16 units but still seven characters.
    expectErrorShape(await call("POST", "/auth/signup", { json: { email: uniqueEmail(), password: "🔒".repeat(7) } }), 400, "password_too_short");
  });

  for (const password of ["password123", "Password123", "12345678", "qwertyuiop", "iloveyou"]) {
    test(`common password ${password} is refused`, async () => {
      expectErrorShape(await call("POST", "/auth/signup", { json: { email: uniqueEmail(), password } }), 400, "password_too_common");
    });
  }

  test("a refused signup creates nothing: the email stays free", async () => {
    const email = uniqueEmail("refused");
    expectErrorShape(await call("POST", "/auth/signup", { json: { email, password: "short" } }), 400, "password_too_short");
    expect((await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD } })).status).toBe(201);
  });
});
