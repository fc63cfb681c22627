// Review emails: the upgrade_request_approve/reject procedures queue these kinds in the outbox
// (so psql reviews notify too); the mail worker renders them here.
import { field, simpleMessage, type MailTemplate } from "../mail/templates.ts";

const PLAN_NAMES: Record<string, string> = { free: "Free", pro: "Pro", enterprise: "Enterprise" };
const planName = (plan: string) => PLAN_NAMES[plan] ?? plan;

export const PLAN_MAIL: Record<string, MailTemplate> = {
  upgrade_approved: (data, ctx) => {
    const plan = planName(field(data, "plan"));
    return simpleMessage(`Your warden account is now on ${plan}`, {
      before: [
        `Good news: your request to move to the ${plan} plan was approved, and your account is on ${plan} now.`,
        "Your new daily limits and features apply from this moment. Your API keys, receipts and policy are unchanged, and nothing needs restarting.",
      ],
      link: { label: "See your usage and limits", url: `${ctx.publicUrl}/console/dashboard` },
      after: [`Request ${field(data, "request_id")}.`],
    });
  },

  upgrade_rejected: (data, ctx) => {
    const plan = planName(field(data, "plan"));
    return simpleMessage(`Your request for the ${plan} plan`, {
      before: [
        `We reviewed your request to move to the ${plan} plan and could not approve it this time. Our note:`,
        field(data, "review_note"),
        "Your account stays on its current plan. You can send a new request whenever you are ready.",
      ],
      link: { label: "Your upgrade requests", url: `${ctx.publicUrl}/console/plan` },
      after: [`Request ${field(data, "request_id")}.`],
    });
  },
};
