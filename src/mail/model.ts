// The shape of GET /dev/mailbox, the development mailbox (./routes.ts).
import { t } from "elysia";

export const DevMailbox = t.Object({
  ok: t.Literal(true),
  /** instance: every message of this instance (it is reached only from this machine); account: those to the signed-in person. */
  scope: t.Union([t.Literal("instance"), t.Literal("account")]),
  messages: t.Array(
    t.Object({
      id: t.Integer(),
      kind: t.String(),
      to: t.String(),
      subject: t.String(),
      date: t.String({ format: "date-time" }),
      text: t.String(),
      links: t.Array(t.String()),
    }),
  ),
});
