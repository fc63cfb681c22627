// /console/dashboard: today's usage against the plan's limits, and the last 14 days.
import { api } from "../app/api.ts";
import type { Session } from "../app/app.tsx";
import { BASE, Link } from "../app/router.tsx";
import { ErrorNotice, formatCount, HistoryChart, Loading, PageTitle, SecretReveal, UsageBar, useLoad, When } from "../app/ui.tsx";

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
        </>
      )}
    </section>
  );
}
