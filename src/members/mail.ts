// The invitation email (outbox kind member_invitation): a link to the console's acceptance page.
import { field, simpleMessage, tokenLink, type MailTemplate } from "../mail/templates.ts";

export const MEMBER_MAIL: Record<string, MailTemplate> = {
  member_invitation: (data, ctx) => {
    const role = field(data, "role");
    const inviter = field(data, "inviter");
    return simpleMessage(`You are invited to a warden tenant as ${role}`, {
      before: [
        `${inviter} invites you to their tenant on warden as ${role === "admin" || role === "owner" ? "an" : "a"} ${role}.`,
        "Open the link to accept: with an account for this address you log in and join; without one you choose a password. The link works once, for 7 days.",
      ],
      link: { label: "Accept the invitation", url: tokenLink(ctx, "/console/invitation", field(data, "token")) },
      after: ["If you did not expect this, ignore this email: nothing happens unless the link is opened and accepted."],
    });
  },
};
