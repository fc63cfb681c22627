// A real SMTP server for tests (smtp-server on 127.0.0.1, a free port) that keeps every message
// it receives, parsed with mailparser, and a dedicated service that delivers mail to it.
import type { AddressInfo } from "node:net";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import type { Config } from "../../src/config.ts";
import type { Db } from "../../src/db/index.ts";
import { createService, type Service } from "../../src/app/service.ts";
import { createLogger } from "../../src/log.ts";
import { testConfig } from "./service.ts";
import { freePort } from "../../scripts/free-port.ts";

export interface Received {
  to: string[];
  parsed: ParsedMail;
  raw: string;
}

export interface Inbox {
  url: string;
  received: Received[];
  /** Messages to one address, waiting until there are at least `count` of them. */
  waitFor(to: string, count?: number, timeoutMs?: number): Promise<Received[]>;
  /** Messages to one address right now. */
  to(address: string): Received[];
  close(): Promise<void>;
}

/** `rejects`: recipients the server refuses with 550 (a permanent failure). */
export async function startInbox(opts: { rejects?: (address: string) => boolean } = {}): Promise<Inbox> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    // No reverse DNS of the client: it costs ~100 ms per connection here.
    disableReverseLookup: true,
    logger: false,
    onRcptTo(address, session, callback) {
      if (!opts.rejects?.(address.address.toLowerCase())) return callback();
      const err = Object.assign(new Error("mailbox unavailable"), { responseCode: 550 });
      callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            received.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), parsed, raw: raw.toString("utf8") });
            callback();
          },
          (err) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  const to = (address: string) => received.filter((m) => m.to.includes(address.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    to,
    async waitFor(address, count = 1, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (to(address).length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} message(s) to ${address}, got ${to(address).length}`);
        await Bun.sleep(10);
      }
      return to(address);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on: an SMTP server that is down. */
export async function deadSmtpUrl(): Promise<string> {
  return `smtp://127.0.0.1:${freePort()}`;
}

/** A service on the shared database whose mail worker delivers to smtpUrl, polling fast. */
export async function mailService(db: Db, overrides: Partial<Config> & { smtpUrl?: string }, lines?: string[], now?: () => Date): Promise<Service> {
  const log = createLogger("info", (line) => lines?.push(line));
  return createService(testConfig({ mailPollMs: 50, ...overrides }), { db, log, now });
}

/** The token of the link to `path` in a message; checks that text and HTML carry the same one. */
export function linkToken(mail: Received, path: "/console/verify" | "/console/reset" | "/console/invitation", publicUrl = testConfig().publicUrl): string {
  const pattern = new RegExp(`${publicUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}${path}\\?token=([A-Za-z0-9_-]+)`);
  const inText = pattern.exec(mail.parsed.text ?? "")?.[1];
  const inHtml = pattern.exec(typeof mail.parsed.html === "string" ? mail.parsed.html : "")?.[1];
  if (!inText) throw new Error(`no ${path} link in the text part`);
  if (inText !== inHtml) throw new Error("the HTML part links to another token than the text part");
  return inText;
}

/** An inbox and a service on the shared test database that delivers to it (close with closeMailFixture). */
export async function openMailFixture(lines?: string[]): Promise<{ inbox: Inbox; service: Service }> {
  const { testService } = await import("./service.ts");
  const { db } = await testService();
  const inbox = await startInbox();
  return { inbox, service: await mailService(db, { smtpUrl: inbox.url }, lines) };
}

export async function closeMailFixture(fixture: { inbox?: Inbox; service?: Service }): Promise<void> {
  await fixture.service?.close();
  await fixture.inbox?.close();
}
