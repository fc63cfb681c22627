// bcrypt is no CPU weapon: at most PASSWORD_HASH_CONCURRENCY hashes run at once and a request
// beyond it gets 503 unavailable with Retry-After at once (no queue); a reset confirm with a dead
// token costs no hash at all.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { call, expectErrorShape, testConfig, testService, uniqueEmail, type Reply } from "../helpers/service.ts";

let service: Service;
beforeAll(async () => {
  const { db } = await testService();
  // A cost that makes one hash last long enough (tens of ms or more) for others to arrive meanwhile.
  service = await createService(testConfig({ bcryptCost: 12, passwordHashConcurrency: 1 }), { db, log: createLogger("silent") });
  await service.deps.dummyPasswordHash;
});
afterAll(() => service.close());

const unknownLogin = () => call("POST", "/auth/login", { json: { email: uniqueEmail("flood"), password: "wrong password" }, service });

test("beyond the cap a login gets 503 unavailable with Retry-After, not a place in a queue", async () => {
  const replies = await Promise.all(Array.from({ length: 4 }, unknownLogin));
  const refused = replies.filter((r) => r.status === 503);
  expect(replies.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(1);
  expect(refused.length).toBeGreaterThanOrEqual(1);
  for (const r of refused) {
    expectErrorShape(r, 503, "unavailable");
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.body.retry_after).toBe(1);
  }
  // Once the hash is done, the next one runs.
  expectErrorShape(await unknownLogin(), 401, "unauthorized");
});

test("a reset confirm with a dead token is refused before any hash, even while the cap is full", async () => {
  const busy = unknownLogin();
  // Let the login reach its hash before the confirm arrives.
  await Bun.sleep(20);
  const confirm: Reply = await call("POST", "/auth/reset-password/confirm", { json: { token: "no-such-token", password: "a fine new passphrase" }, service });
  expectErrorShape(confirm, 400, "invalid_token");
  expectErrorShape(await busy, 401, "unauthorized");
});
