// GET /dev/mailbox, the development mailbox. With no SMTP_URL, mail goes to files in
// DATA_DIR/outbox, where a person trying warden does not look; this shows them, signed in, the
// messages addressed to them, so the verification link is a click away. It exists only while
// this instance writes mail to files (404 with SMTP_URL set), and never shows another address's
// mail or a password-reset link (docs/security.md, "The development mailbox").
import { Elysia } from "elysia";
import type { Deps } from "../app/deps.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { readDevOutbox } from "./dev-outbox.ts";
import { DevMailbox } from "./model.ts";
import { fileOutboxDir } from "./transport.ts";

const bearer = [{ bearer: [] as string[] }] as Record<string, string[]>[];

// A reset link sets the password: shown to a session, it would turn a stolen session into the
// account. It is in the log and the outbox folder, for the person at the terminal.
const NOT_SHOWN = new Set(["reset_password"]);

export function mailRoutes(deps: Deps) {
  const dir = fileOutboxDir(deps.config);
  return new Elysia({ name: "mail", prefix: "/dev" }).get(
    "/mailbox",
    async ({ request, route }) => {
      if (dir === undefined) throw new AppError("not_found");
      const { tenant_id, member_id } = await deps.sessions.require(request, route);
      const email = (await deps.db.one("accounts/account", [tenant_id, member_id]))!.email.toLowerCase();
      const messages = await readDevOutbox(dir, (m) => m.to.toLowerCase() === email && !NOT_SHOWN.has(m.kind));
      return { ok: true as const, messages };
    },
    {
      response: { 200: DevMailbox, 401: ErrorResponse, 404: ErrorResponse },
      detail: {
        summary: "Development mailbox (no SMTP_URL; else 404): the newest mail to the signed-in account's email, links whole; resets left out",
        tags: ["system"],
        security: bearer,
      },
    },
  );
}
