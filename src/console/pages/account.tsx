// /console/account: who you are, changing the password (which ends every other session) and
// the second factor (./mfa.tsx).
import { useState } from "preact/hooks";
import { api, setSessionToken } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { announce, ErrorNotice, Field, Notice, PageTitle, useSubmit, When } from "../app/ui.tsx";
import { SecondFactorPanel } from "./mfa.tsx";

export function AccountPage({ session }: { session: Session }) {
  const { account } = session;
  const [changed, setChanged] = useState(false);
  const form = useSubmit((code) => (code === "unauthorized" ? "current_password" : code.startsWith("password_too_") ? "new_password" : undefined));

  const change = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const get = (name: string) => (el.elements.namedItem(name) as HTMLInputElement).value;
    const current_password = get("current_password");
    const new_password = get("new_password");
    setChanged(false);
    if (!current_password) return form.fail({ current_password: "Enter your current password." });
    if ([...new_password].length < 8) return form.fail({ new_password: "Use at least 8 characters." });
    if (new_password !== get("confirm_password")) return form.fail({ confirm_password: "The two new passwords differ." });
    return form.run(async () => {
      const reply = await api<{ token?: string }>("POST", "/customer/account/password", { json: { current_password, new_password } });
      // Every session ended, this one too: keep the fresh token the change hands back.
      if (reply.token) setSessionToken(reply.token);
      el.reset();
      setChanged(true);
      announce("Password changed. Every other session was signed out.");
    });
  };

  return (
    <section>
      <PageTitle text="Account" />
      <dl class="facts">
        <dt>Email</dt>
        <dd>
          {account.email} {account.email_verified ? <span class="badge active">verified</span> : <span class="badge pending">not verified</span>}
        </dd>
        <dt>Tenant</dt>
        <dd class="mono">{account.tenant_id}</dd>
        <dt>Your role</dt>
        <dd data-testid="account-role">{account.role}</dd>
        <dt>Plan</dt>
        <dd>{account.plan}</dd>
        <dt>Created</dt>
        <dd>
          <When iso={account.created_at} />
        </dd>
      </dl>
      <section class="panel narrow" aria-labelledby="pw">
        <h2 id="pw">Change password</h2>
        {changed && (
          <Notice kind="success">
            <p data-testid="password-changed">Password changed. Every other session was signed out; this one continues.</p>
          </Notice>
        )}
        <form onSubmit={change} ref={form.formRef} noValidate>
          <ErrorNotice error={form.error} />
          <input type="text" name="username" autoComplete="username" value={account.email} hidden readOnly />
          <Field label="Current password" name="current_password" type="password" autoComplete="current-password" required error={form.fields.current_password} />
          <Field label="New password" name="new_password" type="password" autoComplete="new-password" required hint="At least 8 characters." error={form.fields.new_password} />
          <Field label="Repeat the new password" name="confirm_password" type="password" autoComplete="new-password" required error={form.fields.confirm_password} />
          <button type="submit" class="primary" disabled={form.busy}>
            {form.busy ? "Changing…" : "Change password"}
          </button>
        </form>
      </section>
      <SecondFactorPanel session={session} />
    </section>
  );
}
