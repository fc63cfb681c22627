// The console shell: session, account, navigation, the verification banner and the pages.
import { useEffect, useState } from "preact/hooks";
import { isPublicPage, type Page } from "../pages.ts";
import { api, ApiError, onSessionChange, sessionToken, setSessionToken } from "./api.ts";
import { Link, navigate, useRoute, BASE } from "./router.tsx";
import { announce, ErrorNotice, PageTitle, StatusLine } from "./ui.tsx";
import { ForgotPage, LoginPage, ResetPage, SignupPage, VerifyPage } from "../pages/auth.tsx";
import { DashboardPage } from "../pages/dashboard.tsx";
import { KeysPage } from "../pages/keys.tsx";
import { ReceiptPage, ReceiptsPage } from "../pages/receipts.tsx";
import { PolicyPage } from "../pages/policy.tsx";
import { PlanPage } from "../pages/plan.tsx";
import { AccountPage } from "../pages/account.tsx";
import { DevMailboxLink, MailboxPage } from "../pages/mailbox.tsx";
import { MembersPage } from "../pages/members.tsx";
import { AuditPage } from "../pages/audit.tsx";
import { InvitationPage } from "../pages/invitation.tsx";
import { ApprovalsPage } from "../pages/approvals.tsx";
import { ApprovalPage } from "../pages/approval.tsx";
import { WebhooksPage } from "../pages/webhooks.tsx";
import { GatewaysPage } from "../pages/gateways.tsx";
import { EntitiesPage } from "../pages/entities.tsx";
import { AgentsPage } from "../pages/agents.tsx";
import { ConsentPage } from "../pages/consent.tsx";
import { roleCan, type Account, type Session } from "./session.ts";
import { TenantSwitcher } from "./tenants.tsx";

const NAV: { page: Page; label: string }[] = [
  { page: "dashboard", label: "Dashboard" },
  { page: "keys", label: "Keys" },
  { page: "receipts", label: "Receipts" },
  { page: "approvals", label: "Approvals" },
  { page: "policy", label: "Policy" },
  { page: "plan", label: "Plan" },
  { page: "members", label: "Members" },
  { page: "webhooks", label: "Webhooks" },
  { page: "gateways", label: "MCP gateways" },
  { page: "entities", label: "Entities" },
  { page: "agents", label: "Agents" },
  { page: "audit", label: "Audit" },
  { page: "account", label: "Account" },
];

// Where to go after logging in: only a console path, never another site.
export function safeNext(next: string | null): string {
  // The invitation page keeps its token across the login (its only query that is not a secret's
  // second copy: the email holds it too, and the page takes it out of the address bar).
  if (next && /^\/console\/[a-z][a-z0-9/_-]*(\?token=[A-Za-z0-9_-]{1,200})?$/i.test(next)) return next;
  // An agent's authorization request keeps its parameters across the login (the consent page checks them again).
  return next && /^\/console\/consent\?[A-Za-z0-9%._~&=+-]{1,8000}$/.test(next) ? next : `${BASE}/dashboard`;
}

export function App() {
  const route = useRoute();
  const [token, setToken] = useState(sessionToken);
  const [account, setAccount] = useState<Account | null>(null);
  const [accountError, setAccountError] = useState<unknown>(null);
  const [firstKey, setFirstKey] = useState<string | null>(null);

  useEffect(() => onSessionChange(setToken), []);

  const refreshAccount = async () => {
    try {
      setAccount(await api<Account>("GET", "/customer/account"));
      setAccountError(null);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) setAccountError(error);
    }
  };

  useEffect(() => {
    if (token) void refreshAccount();
    else setAccount(null);
  }, [token]);

  const publicPage = route.page === "not_found" || isPublicPage(route.page as Page);

  // Signed-out visitors of a private page go to the login page, and come back after it.
  useEffect(() => {
    if (!token && !publicPage) {
      const here = route.page === "consent" ? location.pathname + location.search : location.pathname;
      navigate(`${BASE}/login${route.page === "home" ? "" : `?next=${encodeURIComponent(here)}`}`, true);
    } else if (token && route.page === "home") navigate(`${BASE}/dashboard`, true);
    else if (token && (route.page === "login" || route.page === "signup")) navigate(`${BASE}/dashboard`, true);
  }, [token, route.page]);

  const logout = () => {
    // Ends the token on the server too; the tab forgets it whatever the answer.
    void api("POST", "/auth/logout", { json: {} }).catch(() => undefined);
    setSessionToken(null);
    navigate(`${BASE}/login`);
    announce("You are logged out.");
  };

  // One receipt or approval is a page of its list's section.
  const section = route.page === "receipt" ? "receipts" : route.page === "approval" ? "approvals" : route.page;
  const pending = usePendingCount(token && account ? account.member_id : null, route.page);

  const signedIn: Session | null =
    token && account ? { account, refreshAccount, firstKey, clearFirstKey: () => setFirstKey(null), can: (route) => roleCan(account.role, route) } : null;

  let content;
  if (route.page === "login") content = <LoginPage next={safeNext(route.query.get("next"))} />;
  else if (route.page === "signup") content = <SignupPage onFirstKey={setFirstKey} />;
  else if (route.page === "forgot") content = <ForgotPage />;
  else if (route.page === "reset") content = <ResetPage token={route.query.get("token")} />;
  else if (route.page === "invitation") content = <InvitationPage token={route.query.get("token")} signedIn={!!token} account={token ? account : null} />;
  else if (route.page === "verify") content = <VerifyPage token={route.query.get("token")} signedIn={!!token} onVerified={refreshAccount} />;
  else if (route.page === "mailbox") content = token && !account && !accountError ? <p class="loading">Loading…</p> : <MailboxPage session={signedIn} />;
  else if (route.page === "not_found") content = <NotFound />;
  else if (!signedIn) content = accountError ? <ErrorNotice error={accountError} /> : <p class="loading">Loading…</p>;
  else if (route.page === "dashboard") content = <DashboardPage session={signedIn} />;
  else if (route.page === "keys") content = <KeysPage session={signedIn} />;
  else if (route.page === "receipts") content = <ReceiptsPage session={signedIn} />;
  else if (route.page === "receipt") content = <ReceiptPage id={route.id!} />;
  else if (route.page === "approvals") content = <ApprovalsPage session={signedIn} />;
  else if (route.page === "approval") content = <ApprovalPage id={route.id!} session={signedIn} onChanged={pending.reload} />;
  else if (route.page === "policy") content = <PolicyPage session={signedIn} />;
  else if (route.page === "plan") content = <PlanPage session={signedIn} />;
  else if (route.page === "members") content = <MembersPage session={signedIn} />;
  else if (route.page === "webhooks") content = <WebhooksPage session={signedIn} />;
  else if (route.page === "gateways") content = <GatewaysPage session={signedIn} />;
  else if (route.page === "entities") content = <EntitiesPage />;
  else if (route.page === "audit") content = <AuditPage session={signedIn} />;
  else if (route.page === "account") content = <AccountPage session={signedIn} />;
  else if (route.page === "agents") content = <AgentsPage session={signedIn} />;
  else if (route.page === "consent") content = <ConsentPage session={signedIn} query={route.query} />;

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href={token ? `${BASE}/dashboard` : `${BASE}/login`} class="brand">
          warden <span>console</span>
        </Link>
        {token && (
          <nav aria-label="Console">
            {signedIn && <TenantSwitcher current={signedIn.account.tenant_id} />}
            <ul>
              {NAV.map((item) => (
                <li key={item.page}>
                  <Link href={`${BASE}/${item.page}`} aria-current={item.page === section ? "page" : undefined}>
                    {item.label}
                    {item.page === "approvals" && <PendingCount count={pending.count} />}
                  </Link>
                </li>
              ))}
              <li>
                <button type="button" class="link" onClick={logout}>
                  Log out
                </button>
              </li>
            </ul>
          </nav>
        )}
      </header>
      {signedIn && !signedIn.account.email_verified && <VerifyBanner email={signedIn.account.email} />}
      <StatusLine />
      {/* A switch of tenant or member starts every page afresh: nothing of the other one stays. */}
      <main id="main" tabIndex={-1} key={signedIn ? signedIn.account.member_id : "signed-out"}>
        {content}
        {/* Signed out (a newcomer with an invitation, a forgotten password): the mail of a development server. */}
        {!token && route.page !== "mailbox" && <DevMailboxLink />}
      </main>
    </>
  );
}

/**
 * How many approvals wait for a decision, for the navigation: one indexed read, again on each
 * page change and after a vote (a tenant holds at most 100 pending, one page).
 */
function usePendingCount(member: string | null, page: string) {
  const [count, setCount] = useState<number | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!member) return setCount(null);
    let live = true;
    api<{ approvals: unknown[] }>("GET", "/customer/approvals?status=pending&limit=100").then(
      (list) => live && setCount(list.approvals.length),
      () => live && setCount(null),
    );
    return () => {
      live = false;
    };
  }, [member, page, tick]);
  return { count, reload: () => setTick((t) => t + 1) };
}

function PendingCount({ count }: { count: number | null }) {
  if (!count) return null;
  return (
    <>
      {" "}
      <span class="count" aria-hidden="true" data-testid="pending-count">
        {count}
      </span>
      <span class="visually-hidden">, {count} pending</span>
    </>
  );
}

/** Shown on every page until the address is verified, with a way to send the email again. */
function VerifyBanner({ email }: { email: string }) {
  const [state, setState] = useState<{ busy: boolean; sent: boolean; error?: unknown }>({ busy: false, sent: false });
  const resend = async () => {
    setState({ busy: true, sent: false });
    try {
      await api("POST", "/auth/verify-email/request", { json: {} });
      setState({ busy: false, sent: true });
      announce(`Verification email sent to ${email}.`);
    } catch (error) {
      setState({ busy: false, sent: false, error });
    }
  };
  return (
    <aside class="banner" aria-label="Email verification" data-testid="verify-banner">
      <p>
        Please verify your email address, <strong>{email}</strong>: open the link we sent you.{" "}
        {state.sent ? <span>Sent: check your inbox.</span> : null}
      </p>
      <button type="button" onClick={resend} disabled={state.busy}>
        {state.busy ? "Sending…" : "Resend email"}
      </button>
      <ErrorNotice error={state.error} />
      <DevMailboxLink />
    </aside>
  );
}

/** Any other path under /console (the server answers it with this page and status 404). */
function NotFound() {
  return (
    <section data-testid="not-found">
      <PageTitle text="Page not found" />
      <p>
        The console has no page at <code class="wrap">{location.pathname}</code>.
      </p>
      <p>
        <Link href={BASE}>Back to the console</Link>
      </p>
    </section>
  );
}
