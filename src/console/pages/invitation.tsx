// /console/invitation?token=…: the page an invitation's email links to (docs/api.md, "Teams").
// Signed in, the person joins with their own session; signed out, a person whose email has an
// account joins with its password, and a new person chooses one (the link proves the email).
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, setSessionToken } from "../app/api.ts";
import type { Account } from "../app/session.ts";
import { BASE, Link, navigate } from "../app/router.tsx";
import { announce, ErrorNotice, Field, Loading, Notice, PageTitle, useLoad, useSubmit } from "../app/ui.tsx";

export function InvitationPage({ token, signedIn, account }: { token: string | null; signedIn: boolean; account: Account | null }) {
  // The token stays in this page's memory only; the address bar keeps no secret.
  const [kept] = useState(token);
  useEffect(() => {
    if (token) history.replaceState(null, "", `${BASE}/invitation`);
  }, []);
  const [joined, setJoined] = useState(false);

  const accepted = (reply: { token: string; role: string }) => {
    setSessionToken(reply.token);
    setJoined(true);
    announce(`You joined the tenant as ${reply.role}.`);
    navigate(`${BASE}/dashboard`, true);
  };

  return (
    <section class="narrow">
      <PageTitle text="Join a tenant" />
      {!kept ? (
        <Notice kind="warning">
          <p>This page needs the link from your invitation email, as it was sent. Ask the person who invited you to send a new one.</p>
        </Notice>
      ) : joined ? null : signedIn && !account ? (
        <Loading what="your account" />
      ) : account ? (
        <JoinSignedIn token={kept} account={account} onJoined={accepted} />
      ) : (
        <JoinSignedOut token={kept} onJoined={accepted} />
      )}
    </section>
  );
}

/** Someone signed in: they join with their session (only as the invitation's email). */
function JoinSignedIn({ token, account, onJoined }: { token: string; account: Account; onJoined: (r: { token: string; role: string }) => void }) {
  const form = useSubmit();
  const join = () => form.run(async () => onJoined(await api<{ token: string; role: string }>("POST", "/auth/invitations/accept", { json: { token } })));
  const wrongPerson = form.error instanceof ApiError && form.error.code === "invalid_token";
  return (
    <>
      <p>
        You are signed in as <strong>{account.email}</strong>. Accepting adds this person to the tenant that invited you, with the role the invitation names; you
        keep your other tenants and switch between them at the top of the page.
      </p>
      <ErrorNotice error={form.error} />
      {wrongPerson && (
        <p>
          An invitation works only for the address it was sent to. If it was sent to another of your addresses, log out and open the link again.
        </p>
      )}
      <button type="button" class="primary" onClick={join} disabled={form.busy}>
        {form.busy ? "Joining…" : `Join as ${account.email}`}
      </button>
    </>
  );
}

interface Preview {
  email: string;
  role: string;
  expires_at: string;
  account_exists: boolean;
  mfa_required: boolean;
}

/**
 * Nobody signed in: the link's preview says whether its email has an account. A person with one
 * joins with its password (and a code when it has a second factor), also one who can no longer log
 * in (removed from their only tenant); a new person chooses a password.
 */
function JoinSignedOut({ token, onJoined }: { token: string; onJoined: (r: { token: string; role: string }) => void }) {
  const preview = useLoad(() => api<Preview>("POST", "/auth/invitations/preview", { json: { token }, auth: false }));
  const [raced, setRaced] = useState(false);
  if (preview.loading && !preview.data) return <Loading what="the invitation" />;
  if (!preview.data) return <ErrorNotice error={preview.error} />;
  const invitation = preview.data;
  return (
    <>
      <p data-testid="invitation-for">
        This invitation is for <strong>{invitation.email}</strong>, as <strong>{invitation.role}</strong>.
      </p>
      {invitation.account_exists || raced ? (
        <JoinWithAccount token={token} invitation={invitation} onJoined={onJoined} />
      ) : (
        <JoinAsNewPerson token={token} onJoined={onJoined} onAccountExists={() => setRaced(true)} />
      )}
    </>
  );
}

/** The email has an account: its own password proves it, as a login would. */
function JoinWithAccount({ token, invitation, onJoined }: { token: string; invitation: Preview; onJoined: (r: { token: string; role: string }) => void }) {
  const form = useSubmit((code) => (code === "unauthorized" ? "password" : code === "invalid_code" ? "code" : undefined));
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const password = (el.elements.namedItem("password") as HTMLInputElement).value;
    if (!password) return form.fail({ password: "Enter the password of your account." });
    const code = invitation.mfa_required ? (el.elements.namedItem("code") as HTMLInputElement).value.trim() : undefined;
    if (invitation.mfa_required && !code) return form.fail({ code: "Enter a code from your authenticator app, or a recovery code." });
    return form.run(async () => onJoined(await api<{ token: string; role: string }>("POST", "/auth/invitations/accept", { json: { token, password, code }, auth: false })));
  };
  return (
    <>
      <h2 id="has-account">Join with your account</h2>
      <p>
        This address already has a warden account: enter its password to join. You keep your password, your other tenants and your second factor. Or{" "}
        <Link href={`${BASE}/login?next=${encodeURIComponent(`${BASE}/invitation?token=${token}`)}`}>log in to accept</Link> with your session.
      </p>
      <ErrorNotice error={form.error} />
      <form onSubmit={onSubmit} ref={form.formRef} noValidate aria-labelledby="has-account">
        <input type="email" name="username" autoComplete="username" value={invitation.email} readOnly hidden />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required error={form.fields.password} />
        {invitation.mfa_required && (
          <Field label="Code" name="code" autoComplete="one-time-code" inputMode="numeric" required hint="From your authenticator app, or a recovery code." error={form.fields.code} />
        )}
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Joining…" : "Join"}
        </button>
      </form>
    </>
  );
}

/** A new person chooses a password for the address the link proves. */
function JoinAsNewPerson({ token, onJoined, onAccountExists }: { token: string; onJoined: (r: { token: string; role: string }) => void; onAccountExists: () => void }) {
  const form = useSubmit((code) => (code.startsWith("password_too_") ? "password" : undefined));
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const password = (el.elements.namedItem("password") as HTMLInputElement).value;
    if ([...password].length < 8) return form.fail({ password: "Use at least 8 characters." });
    if (password !== (el.elements.namedItem("confirm_password") as HTMLInputElement).value) return form.fail({ confirm_password: "The two passwords differ." });
    return form.run(async () => {
      try {
        onJoined(await api<{ token: string; role: string }>("POST", "/auth/invitations/accept", { json: { token, password }, auth: false }));
      } catch (error) {
        // An account was made for the address meanwhile: ask for its password instead.
        if (error instanceof ApiError && error.code === "email_taken") return onAccountExists();
        throw error;
      }
    });
  };
  return (
    <>
      <h2 id="new-person">New to warden</h2>
      <p>Choose a password for the address the invitation was sent to; the link proves it is yours.</p>
      <ErrorNotice error={form.error} />
      <form onSubmit={onSubmit} ref={form.formRef} noValidate aria-labelledby="new-person">
        <Field label="Password" name="password" type="password" autoComplete="new-password" required hint="At least 8 characters." error={form.fields.password} />
        <Field label="Repeat the password" name="confirm_password" type="password" autoComplete="new-password" required error={form.fields.confirm_password} />
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Joining…" : "Set password and join"}
        </button>
      </form>
    </>
  );
}
