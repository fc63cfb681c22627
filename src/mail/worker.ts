// Delivers the mail outbox in the background: polls for due rows (and runs at once when nudged
// after an enqueue), renders each by kind, sends it, and records the outcome. HTTP requests only
// ever write outbox rows, so a slow or dead mail server never slows or fails one.
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import { claimDue, markFailedAttempt, markSent, type ClaimedMail } from "./outbox.ts";
import { TemplateError, type MailContext, type MailTemplates } from "./templates.ts";
import { isPermanentFailure, type MailTransport } from "./transport.ts";

export interface Mailer {
  /** Look for due messages now (call after committing an enqueue). Never waits, never throws. */
  nudge(): void;
  /** Stops polling and waits for the batch in flight. */
  stop(): Promise<void>;
}

const BATCH = 10;

function describe(err: unknown): string {
  return String((err as Error)?.message ?? err).slice(0, 500);
}

/** The template's data with a sealed link token opened; one that does not open (JWT_SECRET changed) fails the row. */
async function openToken(row: ClaimedMail, tokens: SecretBox): Promise<Record<string, unknown>> {
  const { token_sealed, ...data } = row.data as Record<string, unknown>;
  if (token_sealed === undefined) return data;
  try {
    return { ...data, token: await tokens.open(String(token_sealed), row.kind) };
  } catch {
    throw new TemplateError("the link's token does not open under this service secret", true);
  }
}

export function startMailer(opts: { db: Db; log: Logger; transport?: MailTransport; templates: MailTemplates; ctx: MailContext; pollMs: number; tokens: SecretBox }): Mailer {
  const { db, log, transport, ctx } = opts;
  if (!transport) {
    // Messages stay pending until an instance with a transport (SMTP_URL or a DATA_DIR) runs.
    log.warn("mail_not_delivered", { reason: "no SMTP_URL and an in-memory DATA_DIR" });
    return { nudge() {}, stop: async () => {} };
  }

  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  async function deliver(row: ClaimedMail): Promise<void> {
    const fields = { mail_id: row.id, kind: row.kind, tenant_id: row.tenant_id, attempts: row.attempts };
    try {
      const rendered = opts.templates.render(row.kind, await openToken(row, opts.tokens), ctx);
      await transport!.send({ id: row.id, kind: row.kind, to: row.to_email, ...rendered });
    } catch (err) {
      const permanent = err instanceof TemplateError ? err.permanent : isPermanentFailure(err);
      try {
        const status = await markFailedAttempt(db, row.id, describe(err), permanent);
        (status === "failed" ? log.error : log.warn)(status === "failed" ? "mail.failed" : "mail.retry", { ...fields, error: describe(err) });
      } catch (dbErr) {
        // The lease runs out and another pass retries the row.
        log.warn("mail.record_failed", { ...fields, error: describe(dbErr) });
      }
      return;
    }
    try {
      await markSent(db, row.id);
      log.info("mail.sent", fields);
    } catch (dbErr) {
      // Sent but not recorded: the row is retried after its lease (at-least-once delivery).
      log.warn("mail.record_failed", { ...fields, error: describe(dbErr) });
    }
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      let batch: ClaimedMail[];
      try {
        batch = await claimDue(db, BATCH);
      } catch (err) {
        log.warn("mail.claim_failed", { error: describe(err) });
        return;
      }
      await Promise.all(batch.map(deliver));
      if (batch.length === BATCH) again = true;
    } while (again && !stopped);
  }

  function nudge(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain().finally(() => {
      running = undefined;
    });
  }

  const timer = setInterval(nudge, opts.pollMs);
  // The poll alone never keeps a process alive.
  (timer as { unref?: () => void }).unref?.();
  nudge();

  return {
    nudge,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      transport.close();
    },
  };
}
