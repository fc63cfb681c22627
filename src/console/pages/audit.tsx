// /console/audit: the tenant's audit trail (docs/api.md, "The audit trail"), newest first, page by
// page, filtered by event or family. Each entry is a signed receipt of the log: its page checks it
// in the browser like any decision.
import { useState } from "preact/hooks";
import { api } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { useMemberNames } from "../app/names.ts";
import { BASE, Link } from "../app/router.tsx";
import { ErrorNotice, Loading, PageTitle, Pager, useCursorPages, useLoad, When } from "../app/ui.tsx";
import { APPROVAL_EVENTS, EVENTS } from "../../audit/events.ts";

interface AuditEntry {
  receipt_id: string;
  seq: number;
  event: string;
  actor: { member_id: string } | { operator: string } | { key_id: string } | { service: "expiry" };
  target: Record<string, unknown>;
  at: string;
}

const PAGE_SIZE = 25;
const LISTED: readonly string[] = [...EVENTS, ...APPROVAL_EVENTS];
const FAMILIES = [...new Set(LISTED.map((e) => e.slice(0, e.indexOf("."))))];

/** "role: admin, key_id: key_…": the target's fields, nested values as JSON. */
const describe = (target: Record<string, unknown>) =>
  Object.entries(target)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");

export function AuditPage({ session }: { session: Session }) {
  const [filter, setFilter] = useState("");
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const trail = useLoad(() => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor) query.set("cursor", cursor);
    if (filter) query.set("event", filter);
    return api<{ events: AuditEntry[]; next_cursor: string | null }>("GET", `/customer/audit?${query}`);
  }, [cursor, filter]);
  const who = useMemberNames(session.account.member_id);
  const actorOf = (actor: AuditEntry["actor"]) =>
    "operator" in actor ? `operator ${actor.operator}` : "key_id" in actor ? `key ${actor.key_id}` : "service" in actor ? "expired (nobody decided in time)" : who(actor.member_id);
  const events = trail.data?.events ?? [];

  return (
    <section>
      <PageTitle text="Audit trail" />
      <p>
        Who changed what: members, keys, policy, plan and settings, and every step of an approval. Every entry is a signed receipt in the same log as your decisions, chained and in its Merkle tree; open one
        to verify it in your browser, or check it offline with <code>warden verify --proof</code>.
      </p>
      <div class="field narrow">
        <label for="audit-filter">Show</label>
        <select
          id="audit-filter"
          value={filter}
          onChange={(e) => {
            setFilter((e.currentTarget as HTMLSelectElement).value);
            pages.first();
          }}
        >
          <option value="">every event</option>
          {FAMILIES.map((f) => (
            <optgroup key={f} label={f}>
              <option value={`${f}.*`}>every {f} event</option>
              {LISTED.filter((e) => e.startsWith(`${f}.`)).map((e) => (
                <option key={e} value={e}>
                  {e}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </div>
      <ErrorNotice error={trail.error} />
      {trail.loading && !trail.data ? (
        <Loading what="the audit trail" />
      ) : events.length === 0 ? (
        <p data-testid="audit-empty">No events{filter ? " of this kind" : ""} yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">By</th>
                <th scope="col">What</th>
                <th scope="col">Receipt</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <tr key={e.receipt_id} data-event={e.event}>
                  <td data-label="When">
                    <When iso={e.at} />
                  </td>
                  <th scope="row" class="mono">
                    {e.event}
                  </th>
                  <td data-label="By">{actorOf(e.actor)}</td>
                  <td data-label="What" class="small wrap">
                    {describe(e.target)}
                  </td>
                  <td data-label="Receipt">
                    <Link href={`${BASE}/receipts/${e.receipt_id}`} class="mono">
                      seq {e.seq}
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(pages.number > 1 || trail.data?.next_cursor) && <Pager label="Audit pages" pages={pages} next={trail.data?.next_cursor} loading={trail.loading} />}
    </section>
  );
}
