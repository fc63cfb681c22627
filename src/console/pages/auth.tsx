// Signing up and in, and the two pages the emails link to: /console/verify and /console/reset.
import { useEffect, useState } from "preact/hooks";
import { api, setSessionToken } from "../app/api.ts";
import { BASE, Link, navigate } from "../app/router.tsx";
import { announce, ErrorNotice, Field, Notice, PageTitle, useSubmit } from "../app/ui.tsx";

const emailField = (code: string) => (["invalid_email", "disposable_email", "email_taken"].includes(code) ? "email" : undefined);
const passwordField = (name: string) => (code: string) => (code.startsWith("password_too_") ? name : undefined);

const value = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement).value;

export function LoginPage({ next }: { next: string }) {
  const form = useSubmit();
  // With a second factor on, the password step hands over a challenge for the code step.
  const [challenge, setChallenge] = useState<string | null>(null);
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const email = value(el, "email");
    const password = value(el, "password");
    if (!email || !password) return form.fail({ ...(email ? {} : { email: "Enter your email address." }), ...(password ? {} : { password: "Enter your password." }) });
    return form.run(async () => {
      const reply = await api<{ token?: string; mfa_required?: boolean; mfa_token?: string }>("POST", "/auth/login", { json: { email, password }, auth: false });
      if (reply.mfa_required && reply.mfa_token) return setChallenge(reply.mfa_token);
      setSessionToken(reply.token!);
      navigate(next, true);
    });
  };
  if (challenge) return <SecondFactorStep challenge={challenge} next={next} onRestart={() => setChallenge(null)} />;
  return (
    <section class="narrow">
      <PageTitle text="Log in" />
      <form onSubmit={onSubmit} ref={form.formRef} noValidate>
        <ErrorNotice error={form.error} />
        <Field label="Email" name="email" type="email" autoComplete="username" required error={form.fields.email} />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required error={form.fields.password} />
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Logging in…" : "Log in"}
        </button>
      </form>
      <p>
        <Link href={`${BASE}/forgot`}>Forgot your password?</Link>
      </p>
      <p>
        New to warden? <Link href={`${BASE}/signup`}>Create an account</Link>
      </p>
    </section>
  );
}

/** The login's second step: a code from the authenticator app or a recovery code. */
function SecondFactorStep({ challenge, next, onRestart }: { challenge: string; next: string; onRestart: () => void }) {
  const form = useSubmit((code) => (code === "invalid_code" ? "code" : undefined));
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const code = value(event.currentTarget as HTMLFormElement, "code").trim();
    if (!code) return form.fail({ code: "Enter the code from your app." });
    return form.run(async () => {
      const reply = await api<{ token: string }>("POST", "/auth/mfa/verify", { json: { mfa_token: challenge, code }, auth: false });
      setSessionToken(reply.token);
      navigate(next, true);
    });
  };
  return (
    <section class="narrow">
      <PageTitle text="Enter your code" />
      <form onSubmit={onSubmit} ref={form.formRef} noValidate>
        <ErrorNotice error={form.error} />
        <Field label="Code" name="code" type="text" autoComplete="one-time-code" required hint="The 6-digit code from your authenticator app, or one of your recovery codes." error={form.fields.code} />
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Checking…" : "Continue"}
        </button>
      </form>
      <p>
        <button type="button" class="link" onClick={onRestart}>
          Start over
        </button>
      </p>
    </section>
  );
}

export function SignupPage({ onFirstKey }: { onFirstKey: (secret: string) => void }) {
  const form = useSubmit((code) => emailField(code) ?? passwordField("password")(code));
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const email = value(el, "email").trim();
    const password = value(el, "password");
    if (!email) return form.fail({ email: "Enter your email address." });
    if ([...password].length < 8) return form.fail({ password: "Use at least 8 characters." });
    return form.run(async () => {
      const reply = await api<{ token: string; api_key: string }>("POST", "/auth/signup", { json: { email, password }, auth: false });
      onFirstKey(reply.api_key);
      setSessionToken(reply.token);
      navigate(`${BASE}/dashboard`, true);
      announce("Account created. We sent you an email to verify your address.");
    });
  };
  return (
    <section class="narrow">
      <PageTitle text="Create an account" />
      <form onSubmit={onSubmit} ref={form.formRef} noValidate>
        <ErrorNotice error={form.error} />
        <Field label="Email" name="email" type="email" autoComplete="email" required error={form.fields.email} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" required hint="At least 8 characters; a passphrase of a few words is best." error={form.fields.password} />
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Creating…" : "Create account"}
        </button>
      </form>
      <p>
        Already have an account? <Link href={`${BASE}/login`}>Log in</Link>
      </p>
    </section>
  );
}

export function ForgotPage() {
  const form = useSubmit();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const email = value(event.currentTarget as HTMLFormElement, "email").trim();
    if (!email) return form.fail({ email: "Enter your email address." });
    return form.run(async () => {
      await api("POST", "/auth/reset-password/request", { json: { email }, auth: false });
      setSentTo(email);
      announce("If an account uses this address, a reset link is on its way.");
    });
  };
  return (
    <section class="narrow">
      <PageTitle text="Reset your password" />
      {sentTo ? (
        <Notice kind="success">
          <p>
            If an account uses <strong>{sentTo}</strong>, we sent it a link to choose a new password. The link works once and for a limited time.
          </p>
        </Notice>
      ) : (
        <form onSubmit={onSubmit} ref={form.formRef} noValidate>
          <ErrorNotice error={form.error} />
          <Field label="Email" name="email" type="email" autoComplete="email" required error={form.fields.email} />
          <button type="submit" class="primary" disabled={form.busy}>
            Send reset link
          </button>
        </form>
      )}
      <p>
        <Link href={`${BASE}/login`}>Back to log in</Link>
      </p>
    </section>
  );
}

const TOKEN_PROBLEMS: Record<string, string> = {
  invalid_token: "This link is not valid, or a newer one replaced it.",
  token_expired: "This link has expired.",
  token_used: "This link has already been used.",
};

// A refused link, said in words about the link rather than about a token.
const linkProblem = (error: unknown) => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && TOKEN_PROBLEMS[code] ? new Error(TOKEN_PROBLEMS[code]) : error;
};

export function ResetPage({ token }: { token: string | null }) {
  const [validity, setValidity] = useState<{ valid: boolean; reason?: string } | null>(null);
  const [done, setDone] = useState(false);
  const form = useSubmit(passwordField("password"));
  useEffect(() => {
    if (!token) return setValidity({ valid: false, reason: "invalid_token" });
    api<{ valid: boolean; reason?: string }>("POST", "/auth/reset-password/validate", { json: { token }, auth: false }).then(setValidity, () =>
      setValidity({ valid: false, reason: "invalid_token" }),
    );
  }, [token]);
  const onSubmit = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const password = value(el, "password");
    if ([...password].length < 8) return form.fail({ password: "Use at least 8 characters." });
    if (password !== value(el, "confirm")) return form.fail({ confirm: "The two passwords differ." });
    return form.run(async () => {
      await api("POST", "/auth/reset-password/confirm", { json: { token, password }, auth: false });
      // Every session ended with the reset, this tab's too; the link's token leaves the address bar.
      setSessionToken(null);
      navigate(`${BASE}/reset`, true);
      setDone(true);
      announce("Password changed. Log in with the new one.");
    });
  };
  return (
    <section class="narrow">
      <PageTitle text="Choose a new password" />
      {done ? (
        <Notice kind="success">
          <p>Your password is changed and every session was signed out.</p>
          <p>
            <Link href={`${BASE}/login`}>Log in</Link>
          </p>
        </Notice>
      ) : !validity ? (
        <p class="loading">Checking the link…</p>
      ) : !validity.valid ? (
        <div class="notice error" role="alert">
          <p>{TOKEN_PROBLEMS[validity.reason ?? "invalid_token"] ?? TOKEN_PROBLEMS.invalid_token}</p>
          <p>
            <Link href={`${BASE}/forgot`}>Ask for a new link</Link>
          </p>
        </div>
      ) : (
        <form onSubmit={onSubmit} ref={form.formRef} noValidate>
          <ErrorNotice error={linkProblem(form.error)} />
          <Field label="New password" name="password" type="password" autoComplete="new-password" required hint="At least 8 characters." error={form.fields.password} />
          <Field label="Repeat the new password" name="confirm" type="password" autoComplete="new-password" required error={form.fields.confirm} />
          <button type="submit" class="primary" disabled={form.busy}>
            Change password
          </button>
        </form>
      )}
    </section>
  );
}

export function VerifyPage({ token, signedIn, onVerified }: { token: string | null; signedIn: boolean; onVerified: () => Promise<void> }) {
  const [done, setDone] = useState(false);
  const form = useSubmit();
  // A button rather than on load: link scanners in mail systems that run scripts do not click.
  const confirm = () =>
    form.run(async () => {
      await api("POST", "/auth/verify-email/confirm", { json: { token }, auth: false });
      navigate(`${BASE}/verify`, true);
      setDone(true);
      announce("Email address verified.");
      if (signedIn) await onVerified();
    });
  return (
    <section class="narrow">
      <PageTitle text="Verify your email address" />
      {done ? (
        <Notice kind="success">
          <p data-testid="verified">Your email address is verified.</p>
          <p>
            <Link href={signedIn ? `${BASE}/dashboard` : `${BASE}/login`}>{signedIn ? "Go to the dashboard" : "Log in"}</Link>
          </p>
        </Notice>
      ) : !token ? (
        <div class="notice error" role="alert">
          <p>This page needs the link from the verification email.</p>
        </div>
      ) : (
        <>
          <ErrorNotice error={linkProblem(form.error)} />
          <p>Confirm that this address is yours to finish setting up your account.</p>
          <button type="button" class="primary" onClick={confirm} disabled={form.busy}>
            {form.busy ? "Confirming…" : "Confirm my email address"}
          </button>
          {form.error && signedIn ? <p>The banner at the top of the page sends a new link.</p> : null}
        </>
      )}
    </section>
  );
}
