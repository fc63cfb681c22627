// /console/webhooks: the tenant's webhook endpoints (docs/api.md, "Webhooks"): add one (an https
// URL and the events it hears; its signing secret shown once), send it a test event, rotate its
// secret, delete it, and read its deliveries: status, attempts, the last HTTP status, why the last
// attempt failed and when the next one is due. Roles that may only read see the endpoints and
// their deliveries, and are told who may change them.
import { useState } from "preact/hooks";
import { WEBHOOK_EVENTS } from "../../webhooks/events.ts";
import { api, newIdempotencyKey } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { announce, ConfirmButton, ErrorNotice, Field, Loading, Notice, PageTitle, Pager, SecretReveal, useCursorPages, useLoad, useSubmit, When } from "../app/ui.tsx";

interface Webhook {
  webhook_id: string;
  url: string;
  events: string[];
  description: string | null;
  status: "active" | "disabled";
  created_at: string;
}

interface Delivery {
  delivery_id: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

/** The form's subscription: every event ("*"), or the ones ticked. Throws a field's message. */
function chosenEvents(form: HTMLFormElement): string[] {
  const all = (form.elements.namedItem("all_events") as HTMLInputElement).checked;
  if (all) return ["*"];
  const ticked = WEBHOOK_EVENTS.filter((event) => (form.elements.namedItem(`event-${event}`) as HTMLInputElement).checked);
  if (ticked.length === 0) throw new Error("Choose at least one event, or every event.");
  return ticked;
}

function CreateForm({ onCreated }: { onCreated: (hook: Webhook & { secret: string }) => void }) {
  const form = useSubmit((code) => (code === "invalid_request" ? "url" : undefined));
  const [all, setAll] = useState(true);
  const [eventsError, setEventsError] = useState<string | undefined>();
  const create = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const url = (el.elements.namedItem("url") as HTMLInputElement).value.trim();
    const description = (el.elements.namedItem("description") as HTMLInputElement).value.trim();
    if (!/^https:\/\/\S+$/i.test(url)) return form.fail({ url: "An address that starts with https:// and names your receiver's host." });
    let events: string[];
    try {
      events = chosenEvents(el);
    } catch (err) {
      setEventsError((err as Error).message);
      return;
    }
    setEventsError(undefined);
    return form.run(async () => {
      const hook = await api<Webhook & { secret: string }>("POST", "/customer/webhooks", {
        json: { url, events, ...(description ? { description } : {}) },
        idempotencyKey: newIdempotencyKey(),
      });
      el.reset();
      setAll(true);
      onCreated(hook);
    });
  };
  return (
    <section class="panel" aria-labelledby="new-webhook">
      <h2 id="new-webhook">Add an endpoint</h2>
      <form onSubmit={create} ref={form.formRef} noValidate>
        <ErrorNotice error={form.error} />
        <Field label="URL" name="url" type="url" inputMode="url" maxLength={2000} required hint="https only, on a public host: warden refuses addresses inside a private network." error={form.fields.url} />
        <Field label="Description (optional)" name="description" maxLength={200} />
        <fieldset aria-describedby={eventsError ? "events-error" : undefined}>
          <legend>Events it hears</legend>
          <div class="check">
            <input type="checkbox" id="all-events" name="all_events" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
            <label for="all-events">Every event, also those added later</label>
          </div>
          {WEBHOOK_EVENTS.map((name) => (
            <div class="check" key={name}>
              <input type="checkbox" id={`event-${name}`} name={`event-${name}`} disabled={all} />
              <label for={`event-${name}`} class="mono">
                {name}
              </label>
            </div>
          ))}
          {eventsError && (
            <p class="field-error" id="events-error">
              {eventsError}
            </p>
          )}
        </fieldset>
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Adding…" : "Add endpoint"}
        </button>
      </form>
    </section>
  );
}

const PAGE_SIZE = 20;

/** One endpoint's deliveries, newest first, page by page. */
function Deliveries({ hook }: { hook: Webhook }) {
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const list = useLoad(
    () => api<{ deliveries: Delivery[]; next_cursor: string | null }>("GET", `/customer/webhooks/${encodeURIComponent(hook.webhook_id)}/deliveries?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
    [hook.webhook_id, cursor],
  );
  const rows = list.data?.deliveries ?? [];
  return (
    <section class="panel" aria-labelledby="deliveries" data-testid="deliveries">
      <div class="panel-head">
        <h2 id="deliveries">
          Deliveries to <span class="mono wrap">{hook.url}</span>
        </h2>
        <button type="button" onClick={list.reload} disabled={list.loading}>
          Refresh
        </button>
      </div>
      <p class="small">A delivery that gets no 2xx answer is tried again after 1 minute, 2, 4, … up to 8 hours apart, for about three days. A host that resolves to a private address fails at once.</p>
      <ErrorNotice error={list.error} />
      {list.loading && !list.data ? (
        <Loading what="deliveries" />
      ) : rows.length === 0 ? (
        <p data-testid="no-deliveries">No deliveries yet. Send a test event to see one.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" data-testid="deliveries-table">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Next try</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.delivery_id} data-delivery-id={d.delivery_id}>
                  <th scope="row">
                    <span class="mono">{d.event}</span>
                    <div class="small mono wrap">{d.delivery_id}</div>
                  </th>
                  <td data-label="Status">
                    <span class={`badge ${d.status}`}>{d.status}</span>
                  </td>
                  <td data-label="Attempts">{d.attempts}</td>
                  <td data-label="Last answer">
                    {d.last_status_code !== null ? <span class="mono">HTTP {d.last_status_code}</span> : d.attempts === 0 ? "not tried yet" : "no HTTP answer"}
                    {d.last_error && (
                      <div class="small wrap" data-testid="delivery-reason">
                        Why: {d.last_error}
                      </div>
                    )}
                  </td>
                  <td data-label="Next try">
                    <When iso={d.next_attempt_at} none={d.status === "pending" ? "soon" : "none"} />
                  </td>
                  <td data-label="Created">
                    <When iso={d.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(pages.number > 1 || list.data?.next_cursor) && <Pager label="Delivery pages" pages={pages} next={list.data?.next_cursor} loading={list.loading} />}
    </section>
  );
}

export function WebhooksPage({ session }: { session: Session }) {
  const canCreate = session.can("POST /customer/webhooks");
  const canTest = session.can("POST /customer/webhooks/:id/test");
  const canRotate = session.can("POST /customer/webhooks/:id/rotate-secret");
  const canDelete = session.can("DELETE /customer/webhooks/:id");
  const manages = canTest || canRotate || canDelete;
  const list = useLoad(() => api<{ webhooks: Webhook[] }>("GET", "/customer/webhooks"));
  const [revealed, setRevealed] = useState<{ secret: string; label: string } | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  // Bumped after a test event, so the deliveries shown read the new one.
  const [deliveriesTick, setDeliveriesTick] = useState(0);

  const hooks = list.data?.webhooks ?? [];
  const selected = hooks.find((h) => h.webhook_id === shown) ?? null;

  const act = async (hook: Webhook, action: "test" | "rotate" | "delete") => {
    setActionError(null);
    setBusy(hook.webhook_id);
    const path = `/customer/webhooks/${encodeURIComponent(hook.webhook_id)}`;
    try {
      if (action === "test") {
        await api("POST", `${path}/test`, { idempotencyKey: newIdempotencyKey() });
        announce(`Test event sent to ${hook.url}. Its delivery is listed below.`);
        setShown(hook.webhook_id);
        setDeliveriesTick((t) => t + 1);
      } else if (action === "rotate") {
        const reply = await api<{ secret: string }>("POST", `${path}/rotate-secret`, { idempotencyKey: newIdempotencyKey() });
        setRevealed({ secret: reply.secret, label: hook.url });
        announce("Secret rotated: the old one also signs for 24 hours. Copy the new one now.");
      } else {
        await api("DELETE", path);
        if (shown === hook.webhook_id) setShown(null);
        announce(`Endpoint ${hook.url} deleted: it gets nothing more.`);
        list.reload();
      }
    } catch (error) {
      setActionError(error);
    } finally {
      setBusy(null);
    }
  };

  return (
    <section>
      <PageTitle text="Webhooks" />
      <p>
        Warden tells your endpoints of approvals and expiring keys as they happen: a signed POST (Standard Webhooks) that any Standard Webhooks library verifies with the endpoint's secret.
      </p>
      {revealed && <SecretReveal secret={revealed.secret} label={revealed.label} what="webhook" onDone={() => setRevealed(null)} />}
      {canCreate ? (
        <CreateForm
          onCreated={(hook) => {
            setRevealed({ secret: hook.secret, label: hook.url });
            announce("Endpoint added. Copy its signing secret now: it is shown only once.");
            list.reload();
          }}
        />
      ) : (
        <Notice>
          <p data-testid="webhooks-read-only">
            You are a {session.account.role} here: you see the endpoints and their deliveries. Adding, testing, rotating and deleting endpoints is for an admin or the owner.
          </p>
        </Notice>
      )}
      <section class="panel" aria-labelledby="webhook-list">
        <h2 id="webhook-list">Endpoints</h2>
        <ErrorNotice error={list.error ?? actionError} />
        {list.loading && !list.data ? (
          <Loading what="endpoints" />
        ) : hooks.length === 0 ? (
          <p data-testid="no-webhooks">No endpoints yet.</p>
        ) : (
          <ul class="endpoints" data-testid="webhooks-list">
            {hooks.map((hook) => (
              <li key={hook.webhook_id} class="endpoint" data-webhook-id={hook.webhook_id}>
                <p class="endpoint-url mono wrap" id={`url-${hook.webhook_id}`}>
                  {hook.url}
                </p>
                <p class="small">
                  <span class={`badge ${hook.status}`}>{hook.status}</span> {hook.description && <>{hook.description} · </>}
                  hears <span class="mono wrap">{hook.events.includes("*") ? "every event" : hook.events.join(", ")}</span> · added <When iso={hook.created_at} />
                </p>
                {hook.status === "disabled" && <p class="small">It answered 410 Gone, so it gets nothing more: delete it and add a new one.</p>}
                <div class="row-buttons">
                  <button type="button" aria-describedby={`url-${hook.webhook_id}`} aria-pressed={shown === hook.webhook_id} onClick={() => setShown(shown === hook.webhook_id ? null : hook.webhook_id)}>
                    {shown === hook.webhook_id ? "Hide deliveries" : "Deliveries"}
                  </button>
                  {canTest && hook.status === "active" && (
                    <button type="button" aria-describedby={`url-${hook.webhook_id}`} disabled={busy === hook.webhook_id} onClick={() => act(hook, "test")}>
                      Send test event
                    </button>
                  )}
                  {canRotate && (
                    <ConfirmButton
                      label="Rotate secret"
                      describedBy={`url-${hook.webhook_id}`}
                      title="Rotate this endpoint's secret?"
                      body={<p>A new signing secret is made and shown once. For 24 hours deliveries carry a signature by the old secret too, so your receiver can switch without losing any.</p>}
                      confirm="Rotate secret"
                      disabled={busy === hook.webhook_id}
                      onConfirm={() => act(hook, "rotate")}
                    />
                  )}
                  {canDelete && (
                    <ConfirmButton
                      label="Delete"
                      danger
                      describedBy={`url-${hook.webhook_id}`}
                      title="Delete this endpoint?"
                      body={<p>It gets nothing more: deliveries waiting for it fail, and its secret is erased. This cannot be undone.</p>}
                      confirm="Delete endpoint"
                      disabled={busy === hook.webhook_id}
                      onConfirm={() => act(hook, "delete")}
                    />
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
        {!manages && hooks.length > 0 && <p class="small">Only an admin or the owner sends test events, rotates secrets and deletes endpoints.</p>}
      </section>
      {selected && <Deliveries key={`${selected.webhook_id}-${deliveriesTick}`} hook={selected} />}
    </section>
  );
}
