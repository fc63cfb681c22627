// The account page's second-factor panel: enrol (QR code drawn here, never by a third party),
// confirm with a code, show the recovery codes once, disable with the password and a code.
import { useState } from "preact/hooks";
import { encode } from "uqr";
import { api } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { announce, CopyButton, ErrorNotice, Field, Notice, saveFile, useSubmit } from "../app/ui.tsx";

const codeField = (code: string) => (code === "invalid_code" ? "code" : code === "unauthorized" ? "password" : undefined);
const value = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim();

/** The otpauth:// URL as an SVG of dark modules, one path: small and crisp at any size. */
function QrCode({ text }: { text: string }) {
  const { data, size } = encode(text, { ecc: "M", border: 2 });
  let path = "";
  data.forEach((row, y) => row.forEach((dark, x) => dark && (path += `M${x} ${y}h1v1h-1z`)));
  return (
    <svg class="qr" viewBox={`0 0 ${size} ${size}`} width={size * 5} height={size * 5} role="img" aria-label="QR code for your authenticator app" data-testid="mfa-qr" shape-rendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}

/** The recovery codes as a text file: what they are for, then one code a line. */
function recoveryFile(email: string, codes: string[]): Blob {
  const head = [`warden recovery codes for ${email}, made ${new Date().toISOString().slice(0, 10)}.`, "Each signs you in once instead of a code from your authenticator app.", ""];
  return new Blob([[...head, ...codes, ""].join("\n")], { type: "text/plain" });
}

export function SecondFactorPanel({ session }: { session: Session }) {
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_url: string } | null>(null);
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const form = useSubmit(codeField);
  const on = session.account.mfa_enabled;

  const enroll = () =>
    form.run(async () => {
      setEnrolment(await api<{ secret: string; otpauth_url: string }>("POST", "/customer/account/mfa/enroll", { json: {} }));
    });

  const confirm = (event: Event) => {
    event.preventDefault();
    const code = value(event.currentTarget as HTMLFormElement, "code");
    if (!/^\d{6}$/.test(code)) return form.fail({ code: "Enter the 6-digit code from your app." });
    return form.run(async () => {
      const reply = await api<{ recovery_codes: string[] }>("POST", "/customer/account/mfa/confirm", { json: { code } });
      setEnrolment(null);
      setRecovery(reply.recovery_codes);
      announce("Two-step sign-in is on. Store your recovery codes now.");
    });
  };

  // One form, two actions: "Turn off", or "New recovery codes" (both need the password and a code).
  const disableOrReplace = (event: SubmitEvent) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const password = (el.elements.namedItem("password") as HTMLInputElement).value;
    const code = value(el, "code");
    if (!password) return form.fail({ password: "Enter your password." });
    if (!code) return form.fail({ code: "Enter a code from your app or a recovery code." });
    if ((event.submitter as HTMLButtonElement | null)?.value === "recovery-codes") {
      return form.run(async () => {
        const reply = await api<{ recovery_codes: string[] }>("POST", "/customer/account/mfa/recovery-codes", { json: { password, code } });
        el.reset();
        setRecovery(reply.recovery_codes);
        announce("New recovery codes: the earlier ones no longer work. Store these now.");
      });
    }
    return form.run(async () => {
      await api("POST", "/customer/account/mfa/disable", { json: { password, code } });
      await session.refreshAccount();
      announce("Two-step sign-in is off.");
    });
  };

  return (
    // The recovery codes take the page's whole width: in the narrow column they broke mid-code.
    <section class={recovery ? "panel" : "panel narrow"} aria-labelledby="mfa">
      <h2 id="mfa">Two-step sign-in</h2>
      <ErrorNotice error={form.error} />
      {recovery ? (
        <section class="secret" data-testid="mfa-recovery">
          <p class="warning">
            <strong>Store these recovery codes now. They are shown only once.</strong> Each signs you in once if you lose your authenticator app.
          </p>
          <ul class="mono codes" id="recovery-codes">
            {recovery.map((code) => (
              <li key={code}>{code}</li>
            ))}
          </ul>
          <div class="actions">
            <CopyButton text={recovery.join("\n")} source={() => document.getElementById("recovery-codes")} said="Recovery codes copied to the clipboard." />
            <button type="button" onClick={() => saveFile("warden-recovery-codes.txt", recoveryFile(session.account.email, recovery))}>
              Download (.txt)
            </button>
            <button type="button" class="primary" onClick={() => (setRecovery(null), void session.refreshAccount())}>
              I have stored them
            </button>
          </div>
        </section>
      ) : on ? (
        <>
          <p data-testid="mfa-state">On: logging in asks for a code from your authenticator app.</p>
          <form onSubmit={disableOrReplace} ref={form.formRef} noValidate>
            <input type="text" name="username" autoComplete="username" value={session.account.email} hidden readOnly />
            <Field label="Password" name="password" type="password" autoComplete="current-password" required error={form.fields.password} />
            <Field label="Code from your app, or a recovery code" name="code" type="text" autoComplete="one-time-code" required error={form.fields.code} />
            <div class="actions">
              <button type="submit" value="recovery-codes" disabled={form.busy}>
                New recovery codes
              </button>
              <button type="submit" value="disable" disabled={form.busy}>
                Turn off
              </button>
            </div>
          </form>
        </>
      ) : enrolment ? (
        <>
          <p>Scan this code with your authenticator app, or type the key into it. Then enter the code the app shows.</p>
          <QrCode text={enrolment.otpauth_url} />
          <p>
            Key: <code data-testid="mfa-secret">{enrolment.secret}</code>
          </p>
          <form onSubmit={confirm} ref={form.formRef} noValidate>
            <Field label="Code from your app" name="code" type="text" inputMode="numeric" autoComplete="one-time-code" required error={form.fields.code} />
            <button type="submit" class="primary" disabled={form.busy}>
              Turn on
            </button>
          </form>
        </>
      ) : (
        <>
          <Notice kind="info">
            <p data-testid="mfa-state">Off: your password alone signs you in.</p>
          </Notice>
          <button type="button" class="primary" onClick={enroll} disabled={form.busy}>
            Set up two-step sign-in
          </button>
        </>
      )}
    </section>
  );
}
