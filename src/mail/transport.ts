// Where messages go: an SMTP server (SMTP_URL), or RFC 5322 files in DATA_DIR/outbox when no
// server is configured. nodemailer builds the MIME message in both cases.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Transporter } from "nodemailer";
import type { Config } from "../config.ts";
import { lazily } from "../lazily.ts";
import type { Logger } from "../log.ts";
import { maskEmail } from "../mask-email.ts";
import { devMailText, linksIn } from "./dev-outbox.ts";

export interface OutgoingMail {
  /** The outbox row id: names the file and the Message-ID, so a retry replaces, not duplicates. */
  id: number;
  /** The outbox row's kind (verify_email, reset_password, ...). */
  kind: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailTransport {
  readonly kind: "smtp" | "file";
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** A refusal that retrying will not change (an SMTP 5xx answer). */
export function isPermanentFailure(err: unknown): boolean {
  const code = (err as { responseCode?: unknown })?.responseCode;
  return typeof code === "number" && code >= 500 && code < 600;
}

function message(from: string, domain: string, mail: OutgoingMail) {
  return {
    from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    // Stable per outbox row, and nothing in it looks like a token (docs/security.md, Tokens).
    messageId: `<outbox.${mail.id}@${domain}>`,
  };
}

function senderDomain(from: string): string {
  return /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? "localhost";
}

/**
 * nodemailer's transport, made on first use, nodemailer itself loaded then: both would slow the
 * service's start, and most starts send no mail for a while.
 */
function transportOnFirstUse(make: (nodemailer: typeof import("nodemailer").default) => Transporter): { get(): Promise<Transporter>; close(): void } {
  const transporter = lazily(async () => make((await import("nodemailer")).default));
  return { get: transporter.get, close: () => void transporter.started()?.then((t) => t.close(), () => {}) };
}

function smtpTransport(config: Config, url: string): MailTransport {
  // Short timeouts: a hung server must not hold a claimed batch past its lease.
  const transporter = transportOnFirstUse((nodemailer) => nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as never));
  const domain = senderDomain(config.mailFrom);
  return {
    kind: "smtp",
    async send(mail) {
      await (await transporter.get()).sendMail(message(config.mailFrom, domain, mail));
    },
    close: () => transporter.close(),
  };
}

/** Write then rename, so a reader never sees half a file. */
function writeWhole(file: string, content: Buffer | string): void {
  writeFileSync(`${file}.tmp`, content);
  renameSync(`${file}.tmp`, file);
}

function fileTransport(config: Config, dir: string, log: Logger): MailTransport {
  const transporter = transportOnFirstUse((nodemailer) => nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" }) as Transporter);
  const domain = senderDomain(config.mailFrom);
  return {
    kind: "file",
    async send(mail) {
      const info = await (await transporter.get()).sendMail(message(config.mailFrom, domain, mail));
      mkdirSync(dir, { recursive: true });
      writeWhole(join(dir, `${mail.id}.eml`), info.message as Buffer);
      // Quoted-printable breaks a link across lines: the .txt keeps each on one, to copy.
      const text = join(dir, `${mail.id}.txt`);
      writeWhole(text, devMailText(mail, new Date()));
      // Development only: the links (tokens too) go where a person looks, the log. They are on
      // disk in these files already; with SMTP_URL set nothing of a message is logged
      // (docs/security.md).
      log.info("dev_mail", { mail_id: mail.id, kind: mail.kind, to: maskEmail(mail.to), subject: mail.subject, links: linksIn(mail.text), file: text });
    },
    close: () => transporter.close(),
  };
}

/**
 * DATA_DIR/outbox when this instance writes mail to files: no SMTP_URL and a DATA_DIR on disk.
 * An in-memory DATA_DIR (tests) has no outbox folder.
 */
export function fileOutboxDir(config: Config): string | undefined {
  return config.smtpUrl || config.dataDir === "memory://" ? undefined : join(config.dataDir, "outbox");
}

/**
 * SMTP when SMTP_URL is set, else files in DATA_DIR/outbox. With neither there is no transport,
 * and messages wait in the database for an instance that has one.
 */
export function createTransport(config: Config, log: Logger): MailTransport | undefined {
  if (config.smtpUrl) return smtpTransport(config, config.smtpUrl);
  const dir = fileOutboxDir(config);
  return dir === undefined ? undefined : fileTransport(config, dir, log);
}
