// Account-lifecycle helpers: sessions, clocks and signups whose verification mail is awaited.
import { expect } from "bun:test";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { linkToken, type Inbox } from "./mail.ts";
import { call, GOOD_PASSWORD, testConfig, testService, uniqueEmail } from "./service.ts";

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A service on the shared database whose clock runs `ms` ahead (no mail transport). */
export async function laterService(ms: number): Promise<Service> {
  const { db } = await testService();
  return createService(testConfig(), { db, log: createLogger("silent"), now: () => new Date(Date.now() + ms) });
}

/** Signs up through `service` and waits for the verification mail in `inbox`. */
export async function signupWithMail(service: Service, inbox: Inbox, password = GOOD_PASSWORD, tag = "user") {
  const email = uniqueEmail(tag);
  const reply = await call("POST", "/auth/signup", { json: { email, password }, service });
  expect(reply.status).toBe(201);
  const [mail] = await inbox.waitFor(email);
  return { email, password, token: reply.body.token as string, tenantId: reply.body.tenant_id as string, memberId: reply.body.member_id as string, apiKey: reply.body.api_key as string, verifyToken: linkToken(mail, "/console/verify"), mail };
}

/** Asks for a reset through `service` and returns the token of the n-th message to the address. */
export async function requestResetToken(service: Service, inbox: Inbox, email: string): Promise<string> {
  const before = inbox.to(email).length;
  const reply = await call("POST", "/auth/reset-password/request", { json: { email }, service });
  expect(reply.status).toBe(202);
  const messages = await inbox.waitFor(email, before + 1);
  return linkToken(messages[before], "/console/reset");
}
