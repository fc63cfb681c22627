// Message templates by outbox `kind`: pure functions from the row's data to a subject, a plain
// text part and an HTML part. Each capability that sends mail exports its kinds (for example
// upgrade_approved / upgrade_rejected from src/plans/mail.ts); MailTemplates holds them all.

export interface MailContext {
  /** PUBLIC_URL without a trailing slash: the base of every link. */
  publicUrl: string;
}

/** The purpose (HKDF info) of the SecretBox that seals link tokens in the outbox, each with its mail's kind as context. */
export const MAIL_TOKEN_PURPOSE = "warden mail token v1";

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export type MailTemplate = (data: Record<string, unknown>, ctx: MailContext) => RenderedMail;

/**
 * The row cannot become a message. Bad data is permanent; an unknown kind is retried (with
 * backoff, until the attempts run out), since during a rolling deploy another instance may
 * already know it.
 */
export class TemplateError extends Error {
  constructor(message: string, readonly permanent: boolean) {
    super(message);
    this.name = "TemplateError";
  }
}

const KIND = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * The templates by kind, one set from each capability that sends mail (src/accounts/mail.ts,
 * src/members/mail.ts, src/plans/mail.ts), put together once in src/app/service.ts.
 */
export class MailTemplates {
  private readonly byKind = new Map<string, MailTemplate>();

  constructor(...sets: Record<string, MailTemplate>[]) {
    for (const set of sets) {
      for (const [kind, template] of Object.entries(set)) {
        if (!KIND.test(kind)) throw new Error(`bad mail kind: ${kind}`);
        if (this.byKind.has(kind)) throw new Error(`mail kind ${kind} has two templates`);
        this.byKind.set(kind, template);
      }
    }
  }

  render(kind: string, data: Record<string, unknown>, ctx: MailContext): RenderedMail {
    const template = this.byKind.get(kind);
    if (!template) throw new TemplateError(`unknown mail kind: ${kind}`, false);
    return template(data, ctx);
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A string field of the row's data, or a TemplateError. */
export function field(data: Record<string, unknown>, name: string): string {
  const value = data[name];
  if (typeof value !== "string" || value === "") throw new TemplateError(`mail data lacks ${name}`, true);
  return value;
}

/** Paragraphs and one call-to-action link, as text and as minimal inline-styled HTML. */
export function simpleMessage(subject: string, lines: { before: string[]; link?: { label: string; url: string }; after: string[] }): RenderedMail {
  const { before, link, after } = lines;
  const text = [...before, ...(link ? [link.url] : []), ...after].join("\n\n") + "\n";
  const p = (s: string) => `<p style="margin:0 0 16px">${escapeHtml(s)}</p>`;
  const button = link
    ? `<p style="margin:0 0 16px"><a href="${escapeHtml(link.url)}" style="background:#1f2937;color:#ffffff;padding:10px 16px;border-radius:6px;text-decoration:none">${escapeHtml(link.label)}</a></p>`
    : "";
  const html = `<!doctype html><html><body style="font-family:sans-serif;color:#111827;line-height:1.5">${before.map(p).join("")}${button}${after.map(p).join("")}</body></html>`;
  return { subject, text, html };
}

// Each link ends in ?token=<token>, and nothing else in the message looks like a token
// (docs/security.md, Tokens). Tokens are base64url, so they need no escaping in a URL.
export function tokenLink(ctx: MailContext, path: string, token: string): string {
  return `${ctx.publicUrl}${path}?token=${encodeURIComponent(token)}`;
}
