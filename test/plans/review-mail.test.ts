// The tenant receives the review over SMTP: an approval names the plan, a rejection carries the note.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Service } from "../../src/app/service.ts";
import { approve, reject } from "../helpers/ops.ts";
import { closeMailFixture, openMailFixture, type Inbox } from "../helpers/mail.ts";
import { call, signup } from "../helpers/service.ts";

let inbox: Inbox;
let mailer: Service;

beforeAll(async () => ({ inbox, service: mailer } = await openMailFixture()));
afterAll(() => closeMailFixture({ inbox, service: mailer }));

const requestUpgrade = async (token: string, plan: string) =>
  (await call("POST", "/customer/upgrades/request", { json: { requested_plan: plan, reason: "mail test" }, headers: { authorization: `Bearer ${token}` } })).body.request_id as string;

describe("review emails over SMTP", () => {
  test("approval", async () => {
    const user = await signup();
    await approve(await requestUpgrade(user.token, "pro"));
    const mails = (await inbox.waitFor(user.email, 2)).filter((m) => m.parsed.subject?.includes("now on"));
    expect(mails).toHaveLength(1);
    expect(mails[0].parsed.subject).toBe("Your warden account is now on Pro");
    expect(mails[0].parsed.text).toContain("your account is on Pro now");
    expect(typeof mails[0].parsed.html).toBe("string");
  });

  test("rejection carries the operator's note", async () => {
    const user = await signup();
    await reject(await requestUpgrade(user.token, "enterprise"), "We need your expected monthly volume.");
    const mails = (await inbox.waitFor(user.email, 2)).filter((m) => m.parsed.subject?.includes("Enterprise"));
    expect(mails).toHaveLength(1);
    expect(mails[0].parsed.text).toContain("We need your expected monthly volume.");
  });
});
