// GET /dev/mailbox, the development mailbox. With no SMTP_URL, mail goes to files in
// DATA_DIR/outbox, where a person trying warden does not look; this shows it in the browser. It
// exists only while this instance writes mail to files (404 with SMTP_URL set). On an instance
// only this machine reaches (it listens on loopback, calls itself by a loopback address, and is
// asked by one) it shows every message of the instance without a session, as the log and the
// folder do: a newcomer invited by email has no account yet to sign in with. Elsewhere it shows a
// signed-in person only the messages to their address, never a password-reset link
// (docs/security.md, "The development mailbox").
import { Elysia } from "elysia";
import type { Config } from "../config.ts";
import type { Db } from "../db/index.ts";
import type { SessionReader } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { readDevOutbox } from "./dev-outbox.ts";
import { DevMailbox } from "./model.ts";
import { fileOutboxDir } from "./transport.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface MailDeps {
  config: Config;
  db: Db;
  sessions: SessionReader<{ tenant_id: string; member_id: string }>;
}

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];

// A reset link sets the password: shown to a session, it would turn a stolen session into the
// account. It is in the log and the outbox folder, for the person at the terminal.
const NOT_SHOWN = new Set(["reset_password"]);

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const isLoopback = (host: string) => LOOPBACK_NAMES.has(host.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(host);

/** Whether only this machine reaches the instance: it listens on loopback and PUBLIC_URL names a loopback address. */
export function reachedOnlyFromThisMachine(config: { host: string; publicUrl: string }): boolean {
  return isLoopback(config.host) && isLoopback(new URL(config.publicUrl).hostname);
}

export function mailRoutes(deps: MailDeps) {
  const dir = fileOutboxDir(deps.config);
  const local = reachedOnlyFromThisMachine(deps.config);
  return new Elysia({ name: "mail", prefix: "/dev" }).get(
    "/mailbox",
    async ({ request, route }) => {
      if (dir === undefined) throw new AppError("not_found");
      // The Host too: a page elsewhere whose name resolves to 127.0.0.1 (DNS rebinding) reads nothing.
      if (local && isLoopback(new URL(request.url).hostname)) {
        return { ok: true as const, scope: "instance" as const, messages: await readDevOutbox(dir, () => true, 50) };
      }
      const { tenant_id, member_id } = await deps.sessions.require(request, route);
      const email = (await deps.db.one("accounts/account", [tenant_id, member_id]))!.email.toLowerCase();
      const messages = await readDevOutbox(dir, (m) => m.to.toLowerCase() === email && !NOT_SHOWN.has(m.kind));
      return { ok: true as const, scope: "account" as const, messages };
    },
    {
      response: { 200: DevMailbox, 401: ErrorResponse, 404: ErrorResponse },
      detail: {
        summary:
          "Development mailbox (no SMTP_URL; else 404): on an instance only this machine reaches, every message of it, no session needed; elsewhere the newest mail to the signed-in account's email, resets left out",
        tags: ["system"],
        security: bearer,
      },
    },
  );
}
