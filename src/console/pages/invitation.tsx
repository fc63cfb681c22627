// /console/invitation?token=…: the page an invitation's email links to (docs/api.md, "Teams").
// Signed in, the person joins with their own session; a new person chooses a password (the link
// proves the email); a person with an account who is signed out logs in first and comes back.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, setSessionToken } from "../app/api.ts";
import type { Account } from "../app/session.ts";
import { BASE, Link, navigate } from "../app/router.tsx";
import { announce, ErrorNotice, Field, Loading, Notice, PageTitle, useSubmit } from "../app/ui.tsx";

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

/** Nobody signed in: a new person chooses a password; a person with an account logs in first. */
function JoinSignedOut({ token, onJoined }: { token: string; onJoined: (r: { token: string; role: string }) => void }) {
  const form = useSubmit((code) => (code.startsWith("password_too_") ? "password" : undefined));
  const loginFirst = `${BASE}/login?next=${encodeURIComponent(`${BASE}/invitation?token=${token}`)}`;
  const hasAccount = form.error instanceof ApiError && form.error.code === "email_taken";
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const password = (el.elements.namedItem("password") as HTMLInputElement).value;
    if ([...password].length < 8) return form.fail({ password: "Use at least 8 characters." });
    if (password !== (el.elements.namedItem("confirm_password") as HTMLInputElement).value) return form.fail({ confirm_password: "The two passwords differ." });
    return form.run(async () => onJoined(await api<{ token: string; role: string }>("POST", "/auth/invitations/accept", { json: { token, password }, auth: false })));
  };
  return (
    <>
      <p>
        <strong>Already have a warden account?</strong> <Link href={loginFirst}>Log in to accept</Link>: you join with it and keep your password.
      </p>
      <h2 id="new-person">New to warden</h2>
      <p>Choose a password for the address the invitation was sent to; the link proves it is yours.</p>
      {hasAccount ? (
        <Notice kind="warning">
          <p>
            This address already has an account. <Link href={loginFirst}>Log in to accept</Link> with it.
          </p>
        </Notice>
      ) : (
        <ErrorNotice error={form.error} />
      )}
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
