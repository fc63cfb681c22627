// /console/approvals: the inbox of requests a require_approval rule holds for people (docs/api.md,
// "Approvals"): pending ones first, soonest to expire on top, then the rest newest first, or one
// status. Each row names the action and amount (from the signed protect receipt), the key that
// asked and who made it, the rule, the votes so far and a live countdown.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { amountOf } from "../app/approval-text.ts";
import { Countdown, STATUSES, StatusBadge, useKeyNames, type Approval, type KeyName, type ProtectInput } from "../app/approvals.tsx";
import { useMemberNames } from "../app/names.ts";
import { BASE, Link } from "../app/router.tsx";
import { ErrorNotice, Loading, PageTitle, Pager, useCursorPages, useLoad, When } from "../app/ui.tsx";

const PAGE_SIZE = 20;
// A tenant holds at most 100 pending approvals (docs/api.md): one page lists them all.
const ALL_PENDING = 100;

type List = { approvals: Approval[]; next_cursor: string | null };
const list = (query: URLSearchParams) => api<List>("GET", `/customer/approvals?${query}`);

export function ApprovalsPage({ session }: { session: Session }) {
  const [status, setStatus] = useState("");
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const pending = useLoad(() => (status === "" ? list(new URLSearchParams({ status: "pending", limit: String(ALL_PENDING) })) : Promise.resolve(undefined)), [status]);
  const rest = useLoad(() => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (status) query.set("status", status);
    if (cursor) query.set("cursor", cursor);
    return list(query);
  }, [status, cursor]);
  const who = useMemberNames(session.account.member_id);
  const keyName = useKeyNames();
  // Soonest to expire first: that is the one to decide now.
  const waiting = [...(pending.data?.approvals ?? [])].sort((a, b) => Date.parse(a.expires_at) - Date.parse(b.expires_at));
  // In the mixed view the pending ones are above: the rest skips them. (While another status
  // loads, the rows of the last one that do not fit it stay hidden.)
  const others = (rest.data?.approvals ?? []).filter((a) => (status === "" ? a.status !== "pending" : a.status === status));
  const inputs = useRequestInputs([...waiting, ...others]);
  const rowProps = { inputs, keyName, who };

  return (
    <section>
      <PageTitle text="Approvals" />
      <p>
        Requests of your bots that a policy rule holds for people to approve. Open one to see the exact request, the rule's terms and every signed step, and to approve or deny it
        if the rule lets your role vote. Nothing is approved unless enough people say yes in time: an approval that expires counts as denied.
      </p>
      <div class="panel-head">
        <div class="field narrow">
          <label for="approval-filter">Show</label>
          <select
            id="approval-filter"
            value={status}
            onChange={(e) => {
              setStatus((e.currentTarget as HTMLSelectElement).value);
              pages.first();
            }}
          >
            <option value="">pending first, then the rest</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <button
          type="button"
          onClick={() => {
            pending.reload();
            rest.reload();
          }}
          disabled={pending.loading || rest.loading}
        >
          Refresh
        </button>
      </div>
      {status === "" && (
        <section class="panel" aria-labelledby="waiting-title">
          <h2 id="waiting-title">Waiting for a decision{pending.data ? ` (${waiting.length})` : ""}</h2>
          <ErrorNotice error={pending.error} />
          {pending.loading && !pending.data ? (
            <Loading what="pending approvals" />
          ) : waiting.length === 0 ? (
            <p data-testid="no-pending">Nothing waits for a decision.</p>
          ) : (
            <ApprovalTable label="waiting-title" testId="pending-table" approvals={waiting} {...rowProps} />
          )}
        </section>
      )}
      <section class="panel" aria-labelledby="rest-title">
        <h2 id="rest-title">{status === "" ? "Decided" : `Status: ${status}`}</h2>
        <ErrorNotice error={rest.error} />
        {rest.loading && !rest.data ? (
          <Loading what="approvals" />
        ) : others.length === 0 ? (
          <p data-testid="no-approvals">{pages.number > 1 ? "No more on this page." : `No ${status || "decided"} approvals yet.`}</p>
        ) : (
          <ApprovalTable label="rest-title" testId="approvals-table" approvals={others} {...rowProps} />
        )}
        {(pages.number > 1 || rest.data?.next_cursor) && <Pager label="Approval pages" pages={pages} next={rest.data?.next_cursor} loading={rest.loading} />}
      </section>
    </section>
  );
}

type RowProps = {
  inputs: Map<string, ProtectInput | Error>;
  keyName: (id: string) => KeyName | undefined;
  who: (memberId: string | null) => string;
};

function ApprovalTable({ label, testId, approvals, inputs, keyName, who }: { label: string; testId: string; approvals: Approval[] } & RowProps) {
  return (
    <div class="table-wrap">
      <table class="stack" aria-labelledby={label} data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">Request</th>
            <th scope="col">Amount</th>
            <th scope="col">Asked by</th>
            <th scope="col">Rule</th>
            <th scope="col">Votes</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {approvals.map((a) => {
            const input = inputs.get(a.protect_receipt_id);
            const key = keyName(a.key_id);
            const approves = a.votes.filter((v) => v.vote === "approve").length;
            return (
              <tr key={a.approval_id} data-approval-id={a.approval_id} data-status={a.status}>
                <th scope="row">
                  <Link href={`${BASE}/approvals/${a.approval_id}`} class="mono">
                    {input instanceof Error ? a.approval_id : (input?.action ?? "…")}
                  </Link>
                  {input && !(input instanceof Error) && input.resource && <div class="small mono wrap">{input.resource}</div>}
                  <div class="small">
                    <When iso={a.created_at} />
                  </div>
                </th>
                <td data-label="Amount" class="mono">
                  {input && !(input instanceof Error) ? (amountOf(input) ?? "—") : ""}
                </td>
                <td data-label="Asked by">
                  {key ? key.label : <span class="mono">{a.key_id}</span>}
                  <div class="small">{key ? <>key made by {who(key.created_by)}</> : "a key of this tenant"}</div>
                </td>
                <td data-label="Rule" class="mono">
                  {a.rule}
                </td>
                <td data-label="Votes">
                  {approves} of {a.quorum}
                  {a.votes.some((v) => v.vote === "deny") ? ", denied" : ""}
                </td>
                <td data-label="Status">
                  <StatusBadge status={a.status} />{" "}
                  {a.status === "pending" ? (
                    <Countdown until={a.expires_at} over="expiring" />
                  ) : a.status === "approved" && a.execute_before ? (
                    <span class="small">
                      execute by <When iso={a.execute_before} />
                    </span>
                  ) : (
                    <span class="small">
                      <When iso={a.decided_at} />
                    </span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The input each approval asks about, read from its protect receipt (GET /customer/receipts/{id}):
 * the list does not carry it. Each receipt is read once, four at a time.
 */
function useRequestInputs(approvals: Approval[]): Map<string, ProtectInput | Error> {
  const [inputs, setInputs] = useState(() => new Map<string, ProtectInput | Error>());
  const asked = useRef(new Set<string>());
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const ids = [...new Set(approvals.map((a) => a.protect_receipt_id))].join(",");
  useEffect(() => {
    const queue = ids.split(",").filter((id) => id && !asked.current.has(id));
    for (const id of queue) asked.current.add(id);
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        let input: ProtectInput | Error;
        try {
          const { receipt } = await api<{ receipt: { payload: { input?: ProtectInput } } }>("GET", `/customer/receipts/${encodeURIComponent(id)}`);
          input = receipt.payload.input ?? new Error("no input");
        } catch (error) {
          input = error instanceof Error ? error : new Error(String(error));
        }
        const done = id;
        if (mounted.current) setInputs((m) => new Map(m).set(done, input));
      }
    };
    void Promise.all([worker(), worker(), worker(), worker()]);
  }, [ids]);
  return inputs;
}
