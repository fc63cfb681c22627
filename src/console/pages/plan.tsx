// /console/plan: the plans and what they allow, upgrade requests (ask, cancel: owners) and their
// review, with the member who asked.
import { useEffect, useState } from "preact/hooks";
import { api, newIdempotencyKey } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { loadCatalog, planRank } from "../app/catalog.ts";
import { useMemberNames } from "../app/names.ts";
import { announce, ConfirmButton, ErrorNotice, Field, formatCount, Loading, PageTitle, useLoad, useSubmit, When } from "../app/ui.tsx";

interface Upgrade {
  request_id: string;
  status: "pending" | "approved" | "rejected" | "cancelled";
  requested_plan: string;
  reason: string;
  created_at: string;
  reviewed_at: string | null;
  review_note: string | null;
  requested_by: string | null;
}

export function PlanPage({ session }: { session: Session }) {
  const catalog = useLoad(loadCatalog);
  const upgrades = useLoad(() => api<{ upgrades: Upgrade[] }>("GET", "/customer/upgrades"));
  const [cancelError, setCancelError] = useState<unknown>(null);
  const form = useSubmit((code) => (code === "invalid_plan" ? "requested_plan" : code === "invalid_request" ? "reason" : undefined));
  const plan = session.account.plan;
  const canRequest = session.can("POST /customer/upgrades/request");
  const who = useMemberNames(session.account.member_id);

  // The plan may have changed since the shell read it (an operator approved a request).
  useEffect(() => {
    void session.refreshAccount();
  }, [upgrades.data]);

  const higher = catalog.data ? catalog.data.plans.filter((p) => planRank(catalog.data!, p.plan) > planRank(catalog.data!, plan)) : [];
  const pending = upgrades.data?.upgrades.find((u) => u.status === "pending");

  const request = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const requested_plan = (el.elements.namedItem("requested_plan") as HTMLSelectElement).value;
    const reason = (el.elements.namedItem("reason") as HTMLTextAreaElement).value.trim();
    if (!requested_plan) return form.fail({ requested_plan: "Choose a plan." });
    if (reason.length > 2000) return form.fail({ reason: "At most 2,000 characters." });
    return form.run(async () => {
      await api("POST", "/customer/upgrades/request", { json: { requested_plan, reason }, idempotencyKey: newIdempotencyKey() });
      el.reset();
      announce(`Upgrade to ${requested_plan} requested. An operator reviews it, typically within 1 to 2 business days.`);
      upgrades.reload();
    });
  };

  const cancel = async (u: Upgrade) => {
    setCancelError(null);
    try {
      await api("POST", `/customer/upgrades/${encodeURIComponent(u.request_id)}/cancel`, { idempotencyKey: newIdempotencyKey() });
      announce("Upgrade request cancelled.");
      upgrades.reload();
    } catch (error) {
      setCancelError(error);
    }
  };

  return (
    <section>
      <PageTitle text="Plan" />
      <p>
        Your plan: <strong data-testid="current-plan">{plan}</strong>
      </p>
      <ErrorNotice error={catalog.error} />
      {catalog.data && (
        <div class="table-wrap">
          <table class="stack">
            <caption>Daily limits by plan (UTC days)</caption>
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Protect per day</th>
                <th scope="col">Execute per day</th>
                <th scope="col">Receipts stored</th>
              </tr>
            </thead>
            <tbody>
              {catalog.data.plans.map((p) => (
                <tr key={p.plan} class={p.plan === plan ? "current" : undefined} aria-current={p.plan === plan ? "true" : undefined}>
                  <th scope="row">
                    {p.plan}
                    {p.plan === plan ? " (yours)" : ""}
                  </th>
                  <td data-label="Protect per day">{formatCount(p.limits.protect_per_day)}</td>
                  <td data-label="Execute per day">{formatCount(p.limits.execute_per_day)}</td>
                  <td data-label="Receipts stored">{formatCount(p.limits.receipts_stored)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {catalog.data && (
        <details>
          <summary>Features by plan</summary>
          <ul class="features">
            {catalog.data.features.map((f) => (
              <li key={f.feature}>
                <strong>{f.name}</strong> ({f.required_plan}
                {f.access_mode === "request_only" ? ", on request" : ""}): {f.description}
              </li>
            ))}
          </ul>
        </details>
      )}
      <section class="panel" aria-labelledby="ask">
        <h2 id="ask">Request an upgrade</h2>
        {pending ? (
          <p>
            You have a pending request for <strong>{pending.requested_plan}</strong>. An operator reviews it, typically within 1 to 2 business days.
          </p>
        ) : higher.length === 0 && catalog.data ? (
          <p>You are on the highest plan.</p>
        ) : !canRequest ? (
          <p data-testid="upgrade-needs-owner">An owner of this tenant requests upgrades: ask one of them.</p>
        ) : (
          <form onSubmit={request} ref={form.formRef} noValidate>
            <ErrorNotice error={form.error} />
            <div class={`field${form.fields.requested_plan ? " invalid" : ""}`}>
              <label for="requested_plan">Plan</label>
              <select id="requested_plan" name="requested_plan" required aria-invalid={form.fields.requested_plan ? "true" : undefined} aria-describedby={form.fields.requested_plan ? "requested_plan-error" : undefined}>
                {higher.map((p) => (
                  <option key={p.plan} value={p.plan}>
                    {p.plan}
                  </option>
                ))}
              </select>
              {form.fields.requested_plan && (
                <p class="field-error" id="requested_plan-error">
                  {form.fields.requested_plan}
                </p>
              )}
            </div>
            <Field multiline label="Why do you need it? (optional)" name="reason" rows={3} maxLength={2000} error={form.fields.reason} />
            <button type="submit" class="primary" disabled={form.busy || !catalog.data}>
              {form.busy ? "Sending…" : "Request upgrade"}
            </button>
          </form>
        )}
      </section>
      <section class="panel" aria-labelledby="requests">
        <div class="panel-head">
          <h2 id="requests">Requests</h2>
          <button type="button" onClick={upgrades.reload} disabled={upgrades.loading}>
            Refresh
          </button>
        </div>
        <ErrorNotice error={upgrades.error ?? cancelError} />
        {upgrades.loading && !upgrades.data ? (
          <Loading what="requests" />
        ) : upgrades.data?.upgrades.length === 0 ? (
          <p>No requests yet.</p>
        ) : (
          <ul class="requests" data-testid="upgrades">
            {upgrades.data?.upgrades.map((u) => (
              <li key={u.request_id} data-request-id={u.request_id} data-status={u.status}>
                <p>
                  <strong>{u.requested_plan}</strong> <span class={`badge ${u.status}`}>{u.status}</span> asked <When iso={u.created_at} /> by {who(u.requested_by)}
                  {u.reviewed_at && (
                    <>
                      , reviewed <When iso={u.reviewed_at} />
                    </>
                  )}
                </p>
                {u.reason && <p class="small">Reason: {u.reason}</p>}
                {u.review_note && (
                  <p class="review-note">
                    Note from the reviewer: <q>{u.review_note}</q>
                  </p>
                )}
                {u.status === "pending" && canRequest && (
                  <ConfirmButton label="Cancel request" title="Cancel this upgrade request?" body={<p>You can ask again later.</p>} confirm="Cancel request" danger onConfirm={() => cancel(u)} />
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
    </section>
  );
}
