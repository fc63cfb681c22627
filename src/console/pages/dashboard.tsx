// /console/dashboard: today's usage against the plan's limits, the usage limits of the active
// policy in their current windows, and the last 14 days.
import { api } from "../app/api.ts";
import type { Session } from "../app/session.ts";
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
  // A first protect call is for those who handle keys; an approver or a viewer is shown their own part.
  const nextStep = session.can("POST /customer/keys/:key_id/rotate") ? <NextStep firstKeyShown={!!session.firstKey} /> : <YourPart session={session} />;
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
          <PolicyLimits />
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

interface UsageLimit {
  rule: string;
  sum: "amount" | "count";
  per: "key" | "tenant";
  window: "minute" | "hour" | "day" | "month";
  bound: { gt?: number; gte?: number; lt?: number; lte?: number };
  currency: string | null;
  window_start: string;
  usage: { key_id: string | null; total: number }[];
}

const BOUND_WORDS = { gt: "over", gte: "at or over", lt: "under", lte: "at or under" } as const;

/**
 * Each usage limit of the active policy (GET /customer/usage, docs/policy.md "Budgets and rate
 * windows"): one row per key that used it in the current window (per key), or the tenant's total.
 */
function PolicyLimits() {
  const loaded = useLoad(async () => {
    const [usage, keys] = await Promise.all([api<{ policy: { policy_id: string; version: number }; limits: UsageLimit[] }>("GET", "/customer/usage"), api<{ keys: Key[] }>("GET", "/customer/keys?limit=100")]);
    return { ...usage, labels: new Map(keys.keys.map((k) => [k.key_id, k.label])) };
  });
  const data = loaded.data;
  const rows = (data?.limits ?? []).flatMap((limit) => (limit.usage.length > 0 ? limit.usage.map((u) => ({ limit, ...u })) : [{ limit, key_id: null, total: 0 }]));
  return (
    <section class="panel" aria-labelledby="limits" data-testid="usage-limits">
      <h2 id="limits">Policy limits</h2>
      <ErrorNotice error={loaded.error} />
      {loaded.loading && !data && <Loading what="the policy's limits" />}
      {data && data.limits.length === 0 && (
        <p>
          The active policy sets no budget or rate window. A rule's <code>usage</code> condition sets one: <Link href={`${BASE}/policy`}>edit the policy</Link>.
        </p>
      )}
      {data && data.limits.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <caption>
              The budgets and rate windows of {data.policy.policy_id} v{data.policy.version}, each in its current UTC window
            </caption>
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Key</th>
                <th scope="col">Window</th>
                <th scope="col">Used of limit</th>
                <th scope="col">Window start</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ limit, key_id, total }) => {
                const [op, bound] = Object.entries(limit.bound)[0] as [keyof typeof BOUND_WORDS, number];
                const unit = limit.sum === "amount" ? ` ${limit.currency ?? ""}`.trimEnd() : "";
                return (
                  <tr key={`${limit.rule} ${key_id}`} data-rule={limit.rule} data-key={key_id ?? ""}>
                    <td class="mono" data-label="Rule">
                      {limit.rule}
                    </td>
                    <td data-label="Key">
                      {key_id ? (
                        <>
                          {data.labels.get(key_id) ?? ""} <code class="mono small">{key_id}</code>
                        </>
                      ) : limit.per === "tenant" ? (
                        "all keys together"
                      ) : (
                        "no key has used it yet"
                      )}
                    </td>
                    <td data-label="Window">
                      {limit.window} ({limit.sum === "count" ? "requests" : "amount"})
                    </td>
                    <td data-label="Used of limit" data-testid="limit-used">
                      {formatCount(total)} of {formatCount(bound)}
                      {unit} <span class="small">(the rule applies {BOUND_WORDS[op]} {formatCount(bound)})</span>
                    </td>
                    <td data-label="Window start">
                      <When iso={limit.window_start} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
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

/**
 * For the roles that handle no keys (approver, viewer): what they do here, and why the keys' buttons
 * are not theirs, instead of a key to try and rotate that they did not make and cannot rotate.
 */
function YourPart({ session }: { session: Session }) {
  const role = session.account.role;
  const votes = session.can("POST /customer/approvals/:approval_id/votes");
  return (
    <section class="panel" aria-labelledby="your-part" data-testid="your-part">
      <h2 id="your-part">Your part here</h2>
      {votes ? (
        <p>
          You are an <strong>{role}</strong>: you decide the requests a rule holds for people. They wait under <Link href={`${BASE}/approvals`}>Approvals</Link>, and
          warden emails you each one. You also read <Link href={`${BASE}/receipts`}>receipts</Link> and the <Link href={`${BASE}/audit`}>audit trail</Link>.
        </p>
      ) : (
        <p>
          You are a <strong>{role}</strong>: you read everything this tenant has (<Link href={`${BASE}/receipts`}>receipts</Link>, <Link href={`${BASE}/approvals`}>approvals</Link>,{" "}
          <Link href={`${BASE}/audit`}>the audit trail</Link>) and change nothing.
        </p>
      )}
      <p class="small">
        Creating, rotating and revoking API keys is for a developer, an admin or the owner: ask one of them if a bot's key needs to change.
      </p>
    </section>
  );
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
