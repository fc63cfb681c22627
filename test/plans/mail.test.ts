import { describe, expect, test } from "bun:test";
import { MailTemplates, TemplateError } from "../../src/mail/templates.ts";
import { PLAN_MAIL } from "../../src/plans/mail.ts";

const ctx = { publicUrl: "https://warden.example" };
const templates = new MailTemplates(PLAN_MAIL);
const renderMail = templates.render.bind(templates);

describe("review emails", () => {
  test("approval names the new plan and links to the dashboard", () => {
    const m = renderMail("upgrade_approved", { request_id: "upgr_X", plan: "pro", previous_plan: "free" }, ctx);
    expect(m.subject).toBe("Your warden account is now on Pro");
    expect(m.text).toContain("approved");
    expect(m.text).toContain("https://warden.example/console/dashboard");
    expect(m.html).toContain("Pro");
  });

  test("rejection carries the operator's note, escaped in HTML", () => {
    const m = renderMail("upgrade_rejected", { request_id: "upgr_X", plan: "enterprise", review_note: "Volume <too> low & unclear" }, ctx);
    expect(m.subject).toBe("Your request for the Enterprise plan");
    expect(m.text).toContain("Volume <too> low & unclear");
    expect(m.html).toContain("Volume &#60;too&#62; low &#38; unclear");
    expect(m.html).not.toContain("<too>");
  });

  test("a row without its data is a permanent template error", () => {
    expect(() => renderMail("upgrade_rejected", { request_id: "upgr_X", plan: "pro" }, ctx)).toThrow(TemplateError);
  });
});
