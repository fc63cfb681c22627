// Mail in development (no SMTP_URL): each message is also a .txt with its links whole, the log
// prints the links, and GET /dev/mailbox shows a signed-in person their own messages. None of it
// with SMTP_URL set: no link in the log, and the mailbox is 404.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Service } from "../../src/app/service.ts";
import { linkToken, mailService, startInbox } from "../helpers/mail.ts";
import { call, expectErrorShape, GOOD_PASSWORD, testConfig, testService, uniqueEmail } from "../helpers/service.ts";

const PUBLIC_URL = testConfig().publicUrl;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** A mail service on the shared database writing to DATA_DIR/outbox in a temporary folder; its log lines; removed after. */
async function withFileOutbox(fn: (service: Service, outbox: string, lines: string[]) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "warden-devmail-"));
  const { db } = await testService();
  const lines: string[] = [];
  const service = await mailService(db, { dataDir }, lines);
  try {
    await fn(service, join(dataDir, "outbox"), lines);
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function signupAt(service: Service, email = uniqueEmail("dev")) {
  const reply = await call("POST", "/auth/signup", { json: { email, password: GOOD_PASSWORD }, service });
  expect(reply.status).toBe(201);
  return { email, token: reply.body.token as string };
}

const devMailLines = (lines: string[]) => lines.map((l) => JSON.parse(l)).filter((l) => l.event === "dev_mail");

describe("file outbox (no SMTP_URL)", () => {
  test("each message is also a .txt whose link is on one line, and the log prints the link", async () => {
    await withFileOutbox(async (service, outbox, lines) => {
      const { email } = await signupAt(service);
      const [logged] = await until("the dev_mail line", () => {
        const found = devMailLines(lines).filter((l) => l.subject.match(/confirm/i) && l.to === `${email[0]}***@example.com`);
        return found.length > 0 && found;
      });
      expect(logged).toMatchObject({ level: "info", kind: "verify_email", to: `${email[0]}***@example.com` });
      expect(logged.links).toHaveLength(1);
      const [link] = logged.links as string[];
      expect(link).toMatch(new RegExp(`^${PUBLIC_URL.replace(/[.]/g, "\\.")}/console/verify\\?token=[A-Za-z0-9_-]{43}$`));
      // The full address stays out of the log (PII): only the masked form.
      expect(lines.filter((l) => l.includes(email))).toEqual([]);

      expect(logged.file).toBe(join(outbox, `${logged.mail_id}.txt`));
      const txt = readFileSync(logged.file, "utf8");
      expect(txt).toStartWith(`To: ${email}\nSubject: ${logged.subject}\nDate: `);
      expect(txt.split("\n")).toContain(link);
      expect(existsSync(join(outbox, `${logged.mail_id}.eml`))).toBe(true);
      // The .eml's quoted-printable text is what nobody could copy a link from.
      expect(readFileSync(join(outbox, `${logged.mail_id}.eml`), "latin1").split("\r\n")).not.toContain(link);

      const token = new URL(link).searchParams.get("token");
      expect((await call("POST", "/auth/verify-email/confirm", { json: { token }, service })).status).toBe(200);
    });
  });

  test("with SMTP_URL set no message's link reaches the log", async () => {
    const inbox = await startInbox();
    const lines: string[] = [];
    const { db } = await testService();
    const service = await mailService(db, { smtpUrl: inbox.url }, lines);
    try {
      const { email } = await signupAt(service);
      const [mail] = await inbox.waitFor(email);
      const token = linkToken(mail, "/console/verify");
      await until("the mail.sent line", () => lines.some((l) => l.includes('"event":"mail.sent"')));
      expect(devMailLines(lines)).toEqual([]);
      expect(lines.filter((l) => l.includes(token) || l.includes("/console/verify"))).toEqual([]);
    } finally {
      await service.close();
      await inbox.close();
    }
  });
});

describe("GET /dev/mailbox", () => {
  test("shows the signed-in account its own messages, newest first, links whole; not another's, not a reset", async () => {
    await withFileOutbox(async (service, outbox, lines) => {
      const a = await signupAt(service, uniqueEmail("box-a"));
      const b = await signupAt(service, uniqueEmail("box-b"));
      const mailbox = async (token: string) => {
        const reply = await call("GET", "/dev/mailbox", { service, headers: bearer(token) });
        expect(reply.status).toBe(200);
        return reply.body.messages as { id: number; kind: string; to: string; subject: string; date: string; text: string; links: string[] }[];
      };
      const [first] = await until("a's verification in the mailbox", async () => {
        const found = await mailbox(a.token);
        return found.length > 0 && found;
      });
      expect(first).toMatchObject({ kind: "verify_email", to: a.email });
      expect(first.links).toHaveLength(1);
      expect(first.links[0]).toStartWith(`${PUBLIC_URL}/console/verify?token=`);
      expect(first.text).toContain(first.links[0]);
      expect(Date.parse(first.date)).toBeGreaterThan(Date.now() - 60_000);

      // A second verification mail, then a reset request: the reset is logged but not shown.
      expect((await call("POST", "/auth/verify-email/request", { service, json: {}, headers: bearer(a.token) })).status).toBe(202);
      expect((await call("POST", "/auth/reset-password/request", { service, json: { email: a.email } })).status).toBe(202);
      const reset = await until("the reset's dev_mail line", () => devMailLines(lines).find((l) => l.kind === "reset_password" && l.to === `${a.email[0]}***@example.com`));
      expect(reset.links[0]).toStartWith(`${PUBLIC_URL}/console/reset?token=`);
      expect(existsSync(join(outbox, `${reset.mail_id}.txt`))).toBe(true);
      const shown = await until("both verifications", async () => {
        const found = await mailbox(a.token);
        return found.length === 2 && found;
      });
      expect(shown.map((m) => m.kind)).toEqual(["verify_email", "verify_email"]);
      expect(shown[0].id).toBeGreaterThan(shown[1].id);
      expect(shown[1]).toEqual(first);
      expect(JSON.stringify(shown)).not.toContain("/console/reset");

      const theirs = await mailbox(b.token);
      expect(theirs.map((m) => m.to)).toEqual([b.email]);
    });
  });

  test("on an instance only this machine reaches, shows every message of it without a session: a newcomer's invitation, a reset", async () => {
    await withFileOutbox(async (service) => {
      // The test service listens on 127.0.0.1 and PUBLIC_URL names it; asked by that name, the mailbox is the instance's.
      const local = { service, base: PUBLIC_URL };
      expect(new URL(PUBLIC_URL).hostname).toBe("127.0.0.1");
      const owner = await signupAt(service, uniqueEmail("box-owner"));
      const newcomer = uniqueEmail("box-newcomer");
      expect((await call("POST", "/customer/members/invitations", { service, json: { email: newcomer, role: "approver" }, headers: bearer(owner.token) })).status).toBe(201);
      expect((await call("POST", "/auth/reset-password/request", { service, json: { email: owner.email } })).status).toBe(202);
      const all = await until("the invitation and the reset in the mailbox", async () => {
        const reply = await call("GET", "/dev/mailbox", local);
        expect(reply.status).toBe(200);
        const kinds = (reply.body.messages as { kind: string }[]).map((m) => m.kind);
        return kinds.includes("member_invitation") && kinds.includes("reset_password") && reply.body;
      });
      expect(all.scope).toBe("instance");
      const invitation = all.messages.find((m: { kind: string }) => m.kind === "member_invitation");
      expect(invitation.to).toBe(newcomer);
      expect(invitation.links[0]).toStartWith(`${PUBLIC_URL}/console/invitation?token=`);
      // Asked by another name (DNS rebinding, a proxy), it is the signed-in person's mailbox again.
      expectErrorShape(await call("GET", "/dev/mailbox", { service }), 401, "unauthorized");
      const own = await call("GET", "/dev/mailbox", { service, headers: bearer(owner.token) });
      expect(own.body.scope).toBe("account");
      expect(own.body.messages.map((m: { to: string }) => m.to)).not.toContain(newcomer);
    });
  });

  test("an instance reached from elsewhere (HOST beyond loopback) shows nothing without a session, even asked by 127.0.0.1", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "warden-devmail-open-"));
    const { db } = await testService();
    const service = await mailService(db, { dataDir, host: "0.0.0.0" });
    try {
      expectErrorShape(await call("GET", "/dev/mailbox", { service, base: PUBLIC_URL }), 401, "unauthorized");
    } finally {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("needs a session", async () => {
    await withFileOutbox(async (service) => {
      expectErrorShape(await call("GET", "/dev/mailbox", { service }), 401, "unauthorized");
      expectErrorShape(await call("GET", "/dev/mailbox", { service, headers: bearer("not.a.jwt") }), 401, "unauthorized");
    });
  });

  test("is 404 not_found with SMTP_URL set, signed in or not, and where mail is not written to files", async () => {
    const inbox = await startInbox();
    const { db } = await testService();
    const dataDir = mkdtempSync(join(tmpdir(), "warden-devmail-smtp-"));
    // A DATA_DIR on disk too: SMTP_URL alone turns the mailbox off.
    const service = await mailService(db, { smtpUrl: inbox.url, dataDir });
    try {
      const { token } = await signupAt(service);
      expectErrorShape(await call("GET", "/dev/mailbox", { service, headers: bearer(token) }), 404, "not_found");
      expectErrorShape(await call("GET", "/dev/mailbox", { service }), 404, "not_found");
      // The shared test service: an in-memory DATA_DIR, no outbox folder.
      expectErrorShape(await call("GET", "/dev/mailbox", { headers: bearer(token) }), 404, "not_found");
    } finally {
      await service.close();
      await inbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
