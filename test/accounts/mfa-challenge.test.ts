// An mfa_token gives one session: once exchanged, the same token with another unused recovery code
// is refused, and that code stays unused.
import { expect, test } from "bun:test";
import { generate } from "otplib";
import { bearer } from "../helpers/accounts.ts";
import { call, expectErrorShape, GOOD_PASSWORD, signup } from "../helpers/service.ts";

test("a second exchange of one mfa_token is 401 and spends nothing", async () => {
  const user = await signup();
  const secret = (await call("POST", "/customer/account/mfa/enroll", { json: {}, headers: bearer(user.token) })).body.secret as string;
  const confirmed = await call("POST", "/customer/account/mfa/confirm", { json: { code: await generate({ secret }) }, headers: bearer(user.token) });
  const [first, second] = confirmed.body.recovery_codes as string[];
  const login = await call("POST", "/auth/login", { json: { email: user.email, password: GOOD_PASSWORD } });
  expect(login.body.mfa_required).toBe(true);
  const mfa_token = login.body.mfa_token as string;
  const session = await call("POST", "/auth/mfa/verify", { json: { mfa_token, code: first } });
  expect(session.status).toBe(200);
  expectErrorShape(await call("POST", "/auth/mfa/verify", { json: { mfa_token, code: second } }), 401, "unauthorized");
  // The refused exchange spent nothing: the second code still opens a fresh challenge.
  const again = await call("POST", "/auth/login", { json: { email: user.email, password: GOOD_PASSWORD } });
  expect((await call("POST", "/auth/mfa/verify", { json: { mfa_token: again.body.mfa_token, code: second } })).status).toBe(200);
});
