// bcrypt is no CPU weapon: at most PASSWORD_HASH_CONCURRENCY hashes run at once; a request beyond
// it waits its turn (fairly by address) for at most PASSWORD_HASH_WAIT_MS, then gets 503
// unavailable with Retry-After; a reset confirm with a dead token costs no hash at all.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { call, expectErrorShape, testConfig, testService, uniqueEmail, type Reply } from "../helpers/service.ts";

let service: Service;
beforeAll(async () => {
  const { db } = await testService();
  // A cost that makes one hash last long enough (tens of ms or more) for others to arrive meanwhile.
  // A wait far shorter than one hash, so a request behind another is refused.
  service = await createService(testConfig({ bcryptCost: 12, passwordHashConcurrency: 1, passwordHashWaitMs: 1 }), { db, log: createLogger("silent") });
  await service.deps.dummyPasswordHash;
});
afterAll(() => service.close());

const unknownLogin = () => call("POST", "/auth/login", { json: { email: uniqueEmail("flood"), password: "wrong password" }, service });

test("past the bounded wait a login gets 503 unavailable with Retry-After", async () => {
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

test("a burst of ten signups at one moment all succeed: they wait their turn for the hashing", async () => {
  const { db } = await testService();
  const patient = await createService(testConfig({ passwordHashConcurrency: 1 }), { db, log: createLogger("silent") });
  try {
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call("POST", "/auth/signup", { json: { email: uniqueEmail("burst"), password: "a long passphrase" }, service: patient, ip: `192.0.2.${i + 1}` }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
  } finally {
    await patient.close();
  }
});
