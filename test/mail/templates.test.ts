import { describe, expect, test } from "bun:test";
import { ACCOUNT_MAIL } from "../../src/accounts/mail.ts";
import { MEMBER_MAIL } from "../../src/members/mail.ts";
import { PLAN_MAIL } from "../../src/plans/mail.ts";
import { MailTemplates, simpleMessage, TemplateError } from "../../src/mail/templates.ts";

const ctx = { publicUrl: "https://warden.example" };
const TOKEN = "Yk3v9Q_x-2mN8pLr5tW7zB1cD4fG6hJ0kL2nP4qR6sT";
const templates = new MailTemplates(ACCOUNT_MAIL, MEMBER_MAIL, PLAN_MAIL);
const renderMail = templates.render.bind(templates);

describe("built-in templates", () => {
  for (const [kind, path] of [["verify_email", "/console/verify"], ["reset_password", "/console/reset"]] as const) {
    test(`${kind}: a text and an HTML part, each with the one link ending in ?token=`, () => {
      const mail = renderMail(kind, { token: TOKEN }, ctx);
      const link = `${ctx.publicUrl}${path}?token=${TOKEN}`;
      expect(mail.subject.length).toBeGreaterThan(5);
      expect(mail.text).toContain(link);
      expect(mail.html).toContain(`href="${link}"`);
      for (const part of [mail.text, mail.html]) expect(part.match(/[A-Za-z0-9_-]{20,}/g)).toEqual([TOKEN]);
      expect(mail.text).toMatch(/24 hours/);
    });
  }

  test("data without a token is a permanent template error", () => {
    for (const data of [{}, { token: 5 }, { token: "" }]) {
      const err = thrown(() => renderMail("reset_password", data, ctx));
      expect(err).toBeInstanceOf(TemplateError);
      expect(err.permanent).toBe(true);
    }
  });
});

function thrown(fn: () => unknown): TemplateError {
  try {
    fn();
  } catch (err) {
    return err as TemplateError;
  }
  throw new Error("expected a throw");
}

describe("the registry", () => {
  test("an unknown kind is a template error that may be retried", () => {
    const err = thrown(() => renderMail("no_such_kind_here", {}, ctx));
    expect(err).toBeInstanceOf(TemplateError);
    expect(err.permanent).toBe(false);
    expect(err.message).toBe("unknown mail kind: no_such_kind_here");
  });

  test("each capability brings its kinds; HTML is escaped", () => {
    const greeting = { test_greeting: (data: Record<string, unknown>) => simpleMessage("Hello", { before: [`Hi ${String(data.name)}`], after: [] }) };
    const mail = new MailTemplates(ACCOUNT_MAIL, greeting).render("test_greeting", { name: "<b>Ann</b> & co" }, ctx);
    expect(mail.text).toBe("Hi <b>Ann</b> & co\n");
    expect(mail.html).toContain("Hi &#60;b&#62;Ann&#60;/b&#62; &#38; co");
    expect(mail.html).not.toContain("<b>");
    expect(() => new MailTemplates({ "Bad Kind": () => mail })).toThrow();
    // One kind, one template: a second set naming it is a mistake at start, not a silent override.
    expect(() => new MailTemplates(ACCOUNT_MAIL, { verify_email: () => mail })).toThrow("two templates");
  });

  test("the service's sets: every kind the SQL producers queue has a template", () => {
    for (const kind of ["verify_email", "reset_password", "member_invitation", "upgrade_approved", "upgrade_rejected"]) {
      expect(() => renderMail(kind, {}, ctx)).toThrow(expect.objectContaining({ permanent: true }));
    }
  });
});
