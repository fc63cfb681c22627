// Delivers the mail channel of the outbox (src/outbox/worker.ts): renders each message by kind,
// opening a sealed link token, and sends it through the transport.
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Db } from "../db/index.ts";
import type { Logger } from "../log.ts";
import type { Delivery } from "../outbox/queue.ts";
import { startOutboxWorker, type OutboxWorker } from "../outbox/worker.ts";
import { MAIL } from "./outbox.ts";
import { TemplateError, type MailContext, type MailTemplates } from "./templates.ts";
import { isPermanentFailure, type MailTransport } from "./transport.ts";

/** The mail worker: nudge it after committing an enqueue. */
export type Mailer = OutboxWorker;

/** The template's data with a sealed link token opened; one that does not open (JWT_SECRET changed) fails the row. */
async function openToken(row: Delivery, tokens: SecretBox): Promise<Record<string, unknown>> {
  const { token_sealed, ...data } = row.data;
  if (token_sealed === undefined) return data;
  try {
    return { ...data, token: await tokens.open(String(token_sealed), row.kind) };
  } catch {
    throw new TemplateError("the link's token does not open under this service secret", true);
  }
}

export function startMailer(opts: { db: Db; log: Logger; transport?: MailTransport; templates: MailTemplates; ctx: MailContext; pollMs: number; tokens: SecretBox }): Mailer {
  const { transport } = opts;
  if (!transport) {
    // Messages stay pending until an instance with a transport (SMTP_URL or a DATA_DIR) runs.
    opts.log.warn("mail_not_delivered", { reason: "no SMTP_URL and an in-memory DATA_DIR" });
    return { nudge() {}, stop: async () => {} };
  }
  const worker = startOutboxWorker({
    db: opts.db,
    log: opts.log,
    policy: MAIL,
    pollMs: opts.pollMs,
    async deliver(row) {
      const rendered = opts.templates.render(row.kind, await openToken(row, opts.tokens), opts.ctx);
      await transport.send({ id: row.id, kind: row.kind, to: row.recipient, ...rendered });
    },
    permanent: (err) => (err instanceof TemplateError ? err.permanent : isPermanentFailure(err)),
  });
  return {
    nudge: worker.nudge,
    async stop() {
      await worker.stop();
      transport.close();
    },
  };
}
