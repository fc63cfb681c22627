// The email to each member who may vote (outbox kind approval_requested): a link to the approval
// in the console. Nothing approves from the email itself: the vote needs a session there.
import { field, simpleMessage, type MailTemplate } from "../mail/templates.ts";

export const APPROVAL_MAIL: Record<string, MailTemplate> = {
  approval_requested: (data, ctx) => {
    const id = field(data, "approval_id");
    return simpleMessage(`Approval requested: ${field(data, "action")}`, {
      before: [
        `A bot asked to ${field(data, "action")}, and the rule ${field(data, "rule")} holds it for approval by people.`,
        `Review the exact request in the console and approve or deny it there before ${field(data, "expires_at")} (UTC); after that it expires and counts as denied.`,
      ],
      link: { label: "Review the request", url: `${ctx.publicUrl}/console/approvals/${encodeURIComponent(id)}` },
      after: ["Nothing is approved from this email: only a vote in the console, by a member whose role the rule names, counts."],
    });
  },
};
