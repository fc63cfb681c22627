// /console/dashboard: today's usage against the plan's limits, and the last 14 days.
import { api } from "../app/api.ts";
import type { Session } from "../app/app.tsx";
import { BASE, Link } from "../app/router.tsx";
import { protectSnippet } from "../app/snippet.ts";
import { CopyButton, ErrorNotice, formatCount, HistoryChart, Loading, PageTitle, SecretReveal, UsageBar, useLoad, When } from "../app/ui.tsx";

type Limit = number | null;
interface Dashboard {
  plan: string;
  usage: { protect_today: number; execute_today: number; receipts_stored: number };
  limits: { protect_per_day: Limit; execute_per_day: Limit; receipts_stored: Limit };
  keys_active: number;
  pending_upgrade: { request_id: string; requested_plan: string; created_at: string } | null;
  history: { day: string; protect: number; execute: number }[];
}

export function DashboardPage({ session }: { session: Session }) {
  const { data, error, loading, reload } = useLoad(() => api<Dashboard>("GET", "/customer/dashboard"));
  // An account with no calls yet sees the next step first; later it waits under the numbers.
  const fresh = !!data && data.history.every((d) => d.protect === 0 && d.execute === 0);
  const nextStep = <NextStep firstKeyShown={!!session.firstKey} />;
  return (
    <section>
      <PageTitle text="Dashboard" />
      {session.firstKey && <SecretReveal secret={session.firstKey} label="default (your first key)" onDone={session.clearFirstKey} />}
      <ErrorNotice error={error} />
      {loading && !data && <Loading what="usage" />}
      {data && (
        <>
          <div class="cards">
            <div class="card">
              <h2>Plan</h2>
              <p class="big" data-testid="plan">
                {data.plan}
              </p>
              {data.pending_upgrade ? (
                <p>
                  Upgrade to <strong>{data.pending_upgrade.requested_plan}</strong> requested <When iso={data.pending_upgrade.created_at} />. <Link href={`${BASE}/plan`}>See the request</Link>
                </p>
              ) : (
                <p>
                  <Link href={`${BASE}/plan`}>Plans and upgrades</Link>
                </p>
              )}
            </div>
            <div class="card">
              <h2>Active keys</h2>
              <p class="big">{formatCount(data.keys_active)}</p>
              <p>
                <Link href={`${BASE}/keys`}>Manage keys</Link>
              </p>
            </div>
          </div>
          {fresh && nextStep}
          <section class="panel" aria-labelledby="today">
            <div class="panel-head">
              <h2 id="today">Today (UTC)</h2>
              <button type="button" onClick={reload} disabled={loading}>
                Refresh
              </button>
            </div>
            <UsageBar label="Protect calls" used={data.usage.protect_today} limit={data.limits.protect_per_day} />
            <UsageBar label="Execute calls" used={data.usage.execute_today} limit={data.limits.execute_per_day} />
            <UsageBar label="Receipts stored" used={data.usage.receipts_stored} limit={data.limits.receipts_stored} />
          </section>
          <section class="panel" aria-labelledby="history">
            <h2 id="history">Last {data.history.length} days</h2>
            <HistoryChart days={data.history} />
          </section>
          {!fresh && nextStep}
        </>
      )}
    </section>
  );
}

interface Key {
  key_id: string;
  label: string;
  status: "active" | "revoked";
  hint: string;
}

/** What to do next: a first protect call with the newest active key, ready to paste into a shell. */
function NextStep({ firstKeyShown }: { firstKeyShown: boolean }) {
  // Newest first; the first page is enough to find an active key in all but odd accounts.
  const keys = useLoad(() => api<{ keys: Key[] }>("GET", "/customer/keys?limit=100"));
  const key = keys.data?.keys.find((k) => k.status === "active");
  const snippet = key ? protectSnippet(location.origin, key) : "";
  return (
    <section class="panel" aria-labelledby="next-step" data-testid="next-step">
      <h2 id="next-step">Next step: a first decision</h2>
      <ErrorNotice error={keys.error} />
      {keys.loading && !keys.data && <Loading what="your keys" />}
      {keys.data && !key && (
        <p>
          No active key: <Link href={`${BASE}/keys`}>create one</Link>, then come back for a command to try it.
        </p>
      )}
      {key && (
        <>
          <p>
            Ask warden whether a payment may go out, from a shell or your bot's machine. Set <code>WARDEN_API_KEY</code> to the secret you saved for
            your key <strong>{key.label}</strong> (<code class="mono">{key.key_id}</code>, ending in <code class="mono">…{key.hint}</code>)
            {firstKeyShown ? ": the one shown above." : "."} warden keeps only a hash of it and cannot show it again; lost it? <Link href={`${BASE}/keys`}>Rotate the key</Link>.
          </p>
          <pre class="json snippet" id="next-step-snippet" tabIndex={0} aria-label="Command" data-testid="next-step-snippet">
            {snippet}
          </pre>
          <div class="actions">
            <CopyButton key={snippet} text={snippet} source={() => document.getElementById("next-step-snippet")} said="Command copied to the clipboard." />
          </div>
          <p>
            The answer is the decision with its signed receipt, which then appears under <Link href={`${BASE}/receipts`}>Receipts</Link>: open it to verify it in this browser.
          </p>
        </>
      )}
    </section>
  );
}
