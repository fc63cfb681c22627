// The account emails (outbox kinds verify_email, reset_password): a link to the console's page
// that spends the token.
import { field, simpleMessage, tokenLink, type MailTemplate } from "../mail/templates.ts";

export const ACCOUNT_MAIL: Record<string, MailTemplate> = {
  verify_email: (data, ctx) =>
    simpleMessage("Confirm your email address for warden", {
      before: ["Confirm the email address of your warden account by opening this link:"],
      link: { label: "Confirm email address", url: tokenLink(ctx, "/console/verify", field(data, "token")) },
      after: ["The link works once and expires in 24 hours. If you did not create a warden account, ignore this message."],
    }),

  reset_password: (data, ctx) =>
    simpleMessage("Reset your warden password", {
      before: ["Someone asked to reset the password of the warden account for this address. To choose a new password, open this link:"],
      link: { label: "Choose a new password", url: tokenLink(ctx, "/console/reset", field(data, "token")) },
      after: [
        "The link works once and expires in 24 hours. Setting a new password signs you out everywhere.",
        "If you did not ask for this, ignore this message: your password stays as it is.",
      ],
    }),
};
