// /console/mailbox: the development mailbox. A server with no SMTP_URL writes mail to files in
// DATA_DIR/outbox; GET /dev/mailbox shows them: every message of an instance only this machine
// reaches, signed in or not (a newcomer's invitation included), or elsewhere the signed-in
// person's own (never a password reset); 404 on a server that sends real mail.
import { api, ApiError } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { BASE, Link } from "../app/router.tsx";
import { ErrorNotice, Loading, Notice, PageTitle, useLoad, When } from "../app/ui.tsx";

interface DevMessage {
  id: number;
  kind: string;
  to: string;
  subject: string;
  date: string;
  text: string;
  links: string[];
}

const loadMailbox = () => api<{ scope: "instance" | "account"; messages: DevMessage[] }>("GET", "/dev/mailbox");
const sendsRealMail = (error: unknown) => error instanceof ApiError && error.status === 404;

export function MailboxPage({ session }: { session: Session | null }) {
  const mailbox = useLoad(loadMailbox, [session?.account.member_id]);
  const signedOut = mailbox.error instanceof ApiError && mailbox.error.status === 401;
  return (
    <section>
      <PageTitle text="Development mailbox" />
      {sendsRealMail(mailbox.error) ? (
        <Notice>
          <p>This server sends real email (SMTP_URL is set), so there is no development mailbox: look in your inbox.</p>
        </Notice>
      ) : (
        <>
          {mailbox.data?.scope === "account" ? (
            <p>
              This server sends no email (no SMTP_URL): it writes each message to its <code>DATA_DIR/outbox</code> folder and prints its links in
              its log. It is reached from other machines, so here are only the newest messages to <strong>{session?.account.email}</strong>, and no
              password reset links: find those in the log (<code>dev_mail</code>) or the outbox folder.
            </p>
          ) : signedOut ? (
            <p>
              This server sends no email and is reached from other machines: <Link href={`${BASE}/login?next=${encodeURIComponent(`${BASE}/mailbox`)}`}>log in</Link> to see
              the messages to your address, or find them in the server's log (<code>dev_mail</code>) and its <code>DATA_DIR/outbox</code> folder.
            </p>
          ) : (
            <p>
              This server sends no email (no SMTP_URL): it writes each message to its <code>DATA_DIR/outbox</code> folder and prints its links in
              its log. Only this machine reaches it, so here is every message it sent, to anyone: an invitation to someone without an account
              yet, a password reset, a verification.
            </p>
          )}
          <p>
            <button type="button" onClick={mailbox.reload} disabled={mailbox.loading}>
              Refresh
            </button>
          </p>
          {!signedOut && <ErrorNotice error={mailbox.error} />}
          {mailbox.loading && !mailbox.data ? <Loading what="messages" /> : null}
          {mailbox.data?.messages.length === 0 && <p data-testid="mailbox-empty">No messages yet.</p>}
          {mailbox.data?.messages.map((m) => (
            <article key={m.id} class="panel" data-testid="dev-message">
              <h2>{m.subject}</h2>
              <p class="small">
                To {m.to}, <When iso={m.date} />
              </p>
              <ul>
                {m.links.map((link) => (
                  <li key={link}>
                    <a href={link} class="wrap">
                      {link}
                    </a>
                  </li>
                ))}
              </ul>
              <details>
                <summary>Whole message</summary>
                <p class="wrap">{m.text}</p>
              </details>
            </article>
          ))}
        </>
      )}
    </section>
  );
}

/** A link to the mailbox, shown only where the server has one (no SMTP_URL). */
export function DevMailboxLink() {
  const mailbox = useLoad(loadMailbox);
  if (!mailbox.data) return null;
  return (
    <p class="small" data-testid="dev-mailbox-link">
      This server sends no email: open the <Link href={`${BASE}/mailbox`}>development mailbox</Link>.
    </p>
  );
}
