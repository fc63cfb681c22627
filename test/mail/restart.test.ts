// A message queued while the SMTP server is down survives the service: a new instance on the
// same database, with the server up, delivers it and the link in it works.
import { expect, test } from "bun:test";
import { linkToken, deadSmtpUrl, mailService, startInbox } from "../helpers/mail.ts";
import { call, GOOD_PASSWORD, testService, uniqueEmail } from "../helpers/service.ts";
import { testQuery } from "../helpers/sql.ts";

type Row = { id: number; status: string; attempts: number; last_error: string | null; data: Record<string, unknown> };

test("outbox survives a restart: queued with SMTP down, delivered by the next instance", async () => {
  const { db } = await testService();
  const email = uniqueEmail("restart");
  const rows = () => testQuery<Row>(db, "mail_outbox", [email]);

  const first = await mailService(db, { smtpUrl: await deadSmtpUrl() });
  try {
    expect((await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD }, service: first })).status).toBe(201);
    const deadline = Date.now() + 15_000;
    while (!(await rows())[0]?.last_error && Date.now() < deadline) await Bun.sleep(20);
  } finally {
    await first.close();
  }
  const [waiting] = await rows();
  expect(waiting).toMatchObject({ status: "pending", attempts: 1 });
  expect(waiting.last_error).toBeTruthy();

  // The backoff would hold it for 30 s; pretend that time has passed.
  expect(await testQuery(db, "mail_outbox_make_due", [email])).toHaveLength(1);
  const inbox = await startInbox();
  const second = await mailService(db, { smtpUrl: inbox.url });
  try {
    const [mail] = await inbox.waitFor(email);
    expect((await call("POST", "/auth/verify-email/confirm", { json: { token: linkToken(mail, "/console/verify") }, service: second })).status).toBe(200);
    const deadline = Date.now() + 15_000;
    while ((await rows())[0].status !== "sent" && Date.now() < deadline) await Bun.sleep(20);
    expect((await rows())[0]).toMatchObject({ id: waiting.id, status: "sent", attempts: 2, data: {} });
    expect(inbox.to(email)).toHaveLength(1);
  } finally {
    await second.close();
    await inbox.close();
  }
});
