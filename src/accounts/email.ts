// Email acceptance for signup: syntax first, then the maintained disposable-domain list.
import { AppError } from "../http/errors.ts";
import { lazily } from "../lazily.ts";

// Practical address syntax: no quoted local parts or IP literals, a dotted domain of LDH labels.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;


export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isValidEmailSyntax(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf("@");
  if (at <= 0 || at > 64) return false;
  const local = email.slice(0, at);
  const labels = email.slice(at + 1).split(".");
  return LOCAL.test(local) && labels.length >= 2 && labels.every((l) => LABEL.test(l)) && /[a-z]/i.test(labels.at(-1)!);
}

/** Which addresses may sign up or be invited: valid syntax, and not at a disposable-mail domain. */
export class SignupEmails {
  /** The maintained list (~55,000 domains), loaded at the first signup, not at start-up. */
  private readonly disposable = lazily(async () => new Set((await import("mailchecker")).default.blacklist()));

  /** True when the domain or any parent domain is on the disposable list. */
  async isDisposable(email: string): Promise<boolean> {
    const list = await this.disposable.get();
    const labels = email.slice(email.lastIndexOf("@") + 1).toLowerCase().split(".");
    for (let i = 0; i < labels.length - 1; i++) if (list.has(labels.slice(i).join("."))) return true;
    return false;
  }

  /** The normalised address, or the error of docs/api.md (invalid_email, disposable_email). */
  async accept(raw: string): Promise<string> {
    const email = normaliseEmail(raw);
    if (!isValidEmailSyntax(email)) throw new AppError("invalid_email", "Enter a valid email address.");
    if (await this.isDisposable(email)) throw new AppError("disposable_email", "Disposable email addresses are not accepted.");
    return email;
  }
}
