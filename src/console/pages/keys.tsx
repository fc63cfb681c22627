// /console/keys: create (secret shown once), list (newest first, page by page) with hints, last
// use, the member who made or ended each key and what each may do (docs/api.md, "Keys for
// agents"), edit those, rotate (optionally keeping the old secret a while), revoke. Roles that may
// only read see the list without its buttons.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { api, newIdempotencyKey } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { useMemberNames } from "../app/names.ts";
import { announce, ConfirmButton, ErrorNotice, Field, Loading, PageTitle, Pager, SecretReveal, useCursorPages, useLoad, useSubmit, When } from "../app/ui.tsx";

interface Key {
  key_id: string;
  label: string;
  status: "active" | "revoked";
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  hint: string;
  created_by: string | null;
  revoked_by: string | null;
  expires_at: string | null;
  enabled: boolean;
  actions: string[] | null;
  limits: { protect_per_day?: number; per_second?: number; burst?: number };
  allowed_ips: string[] | null;
  metadata: Record<string, string>;
  overlap_until: string | null;
}

/** How long a rotation keeps the old secret working, as the rotate dialog offers it. */
const OVERLAPS: [number, string][] = [
  [0, "not at all: it stops at once"],
  [300, "5 minutes"],
  [3600, "1 hour"],
  [86_400, "24 hours"],
];

/** What a key may do, in words, for its row; nothing when it has no restriction. */
function Restrictions({ k }: { k: Key }) {
  const items: ComponentChildren[] = [];
  if (!k.enabled) items.push(<strong>suspended</strong>);
  if (k.expires_at) items.push(<>expires <When iso={k.expires_at} /></>);
  if (k.overlap_until) items.push(<>old secret works until <When iso={k.overlap_until} /></>);
  if (k.actions) items.push(<>actions: <span class="mono">{k.actions.join(", ")}</span></>);
  const { protect_per_day, per_second, burst } = k.limits;
  if (protect_per_day !== undefined) items.push(<>{protect_per_day} protects a day</>);
  if (per_second !== undefined) items.push(<>{per_second} a second{burst !== undefined ? `, bursts of ${burst}` : ""}</>);
  if (k.allowed_ips) items.push(<>from <span class="mono">{k.allowed_ips.join(", ")}</span></>);
  for (const [name, value] of Object.entries(k.metadata)) items.push(<>{name}: {value}</>);
  if (items.length === 0) return <span class="small">none</span>;
  return (
    <ul class="small plain">
      {items.map((item, i) => <li key={i}>{item}</li>)}
    </ul>
  );
}

/** An ISO instant as a datetime-local input shows it (the browser's time zone), and back. */
const toLocalInput = (iso: string | null) => {
  if (!iso) return "";
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const lines = (text: string) => text.split("\n").map((l) => l.trim()).filter(Boolean);

/** The PATCH body of the edit form: every property, empty fields cleared. Throws a field's message. */
function editBody(form: HTMLFormElement): Record<string, unknown> {
  const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLTextAreaElement).value.trim();
  const fail = (field: string, message: string) => {
    throw Object.assign(new Error(message), { field });
  };
  const label = value("label");
  if (!label) fail("label", "Give the key a name.");
  const expires = value("expires_at");
  const limits: Record<string, number> = {};
  for (const name of ["protect_per_day", "per_second", "burst"]) {
    const text = value(name);
    if (!text) continue;
    if (!/^\d+$/.test(text) || Number(text) < 1) fail(name, "A whole number from 1, or empty for no limit.");
    limits[name] = Number(text);
  }
  if (limits.burst !== undefined && limits.per_second === undefined) fail("burst", "A burst needs a rate per second.");
  const metadata: Record<string, string> = {};
  for (const line of lines(value("metadata"))) {
    const eq = line.indexOf("=");
    if (eq <= 0) fail("metadata", `“${line}” is not name=value.`);
    metadata[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  if (Object.keys(metadata).length > 16) fail("metadata", "At most 16 entries.");
  const actions = lines(value("actions"));
  const ips = lines(value("allowed_ips"));
  return {
    label,
    expires_at: expires ? new Date(expires).toISOString() : null,
    enabled: (form.elements.namedItem("enabled") as HTMLInputElement).checked,
    actions: actions.length ? actions : null,
    limits: Object.keys(limits).length ? limits : null,
    allowed_ips: ips.length ? ips : null,
    metadata,
  };
}

/** The form that changes what one key may do. */
function KeyEditor({ k, onDone }: { k: Key; onDone: (saved: boolean) => void }) {
  const form = useSubmit();
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const save = (event: Event) => {
    event.preventDefault();
    let body: Record<string, unknown>;
    try {
      body = editBody(event.currentTarget as HTMLFormElement);
    } catch (err) {
      const { field, message } = err as { field: string; message: string };
      setFieldErrors({ [field]: message });
      (event.currentTarget as HTMLFormElement).querySelector<HTMLElement>(`[name="${field}"]`)?.focus();
      return;
    }
    setFieldErrors({});
    return form.run(async () => {
      await api("PATCH", `/customer/keys/${encodeURIComponent(k.key_id)}`, { json: body });
      announce(`Key ${k.label} saved: the next request with it follows the change.`);
      onDone(true);
    });
  };
  const errors = { ...form.fields, ...fieldErrors };
  return (
    <section class="panel" aria-labelledby="edit-key" data-testid="key-editor">
      <h2 id="edit-key">What “{k.label}” may do</h2>
      <form onSubmit={save} ref={form.formRef} noValidate>
        <ErrorNotice error={form.error} />
        <Field label="Label" name="label" maxLength={100} required defaultValue={k.label} error={errors.label} />
        <div class="check">
          <input type="checkbox" id="key-enabled" name="enabled" defaultChecked={k.enabled} />
          <label for="key-enabled">Enabled: unticked, the key is suspended (401 key_disabled) until you tick it again.</label>
        </div>
        <Field label="Expires" name="expires_at" type="datetime-local" defaultValue={toLocalInput(k.expires_at)} hint="Your local time. Empty: never. Webhooks hear key.expiring 7 days and 1 day before." error={errors.expires_at} />
        <Field label="Actions it may ask about" name="actions" multiline rows={3} defaultValue={(k.actions ?? []).join("\n")} hint="One per line, as in policies (payment.* for every payment action). Empty: any action." error={errors.actions} />
        <fieldset>
          <legend>Limits of this key (empty: none)</legend>
          <Field label="Protects a day" name="protect_per_day" inputMode="numeric" defaultValue={k.limits.protect_per_day?.toString() ?? ""} hint="At most your plan's daily quota." error={errors.protect_per_day} />
          <Field label="Requests a second" name="per_second" inputMode="numeric" defaultValue={k.limits.per_second?.toString() ?? ""} error={errors.per_second} />
          <Field label="Burst" name="burst" inputMode="numeric" defaultValue={k.limits.burst?.toString() ?? ""} hint="Requests at once after a pause; default: the rate per second." error={errors.burst} />
        </fieldset>
        <Field label="Allowed addresses" name="allowed_ips" multiline rows={2} defaultValue={(k.allowed_ips ?? []).join("\n")} hint="One IPv4 or IPv6 block per line, like 203.0.113.0/24. Empty: from anywhere." error={errors.allowed_ips} />
        <Field label="Metadata" name="metadata" multiline rows={3} defaultValue={Object.entries(k.metadata).map(([n, v]) => `${n}=${v}`).join("\n")} hint="name=value per line, at most 16: the agent's name, its owner." error={errors.metadata} />
        <div class="actions">
          <button type="button" onClick={() => onDone(false)}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={form.busy}>
            {form.busy ? "Saving…" : "Save key"}
          </button>
        </div>
      </form>
    </section>
  );
}

const PAGE_SIZE = 20;

export function KeysPage({ session }: { session: Session }) {
  const canCreate = session.can("POST /customer/keys");
  const canRotate = session.can("POST /customer/keys/:key_id/rotate");
  const canRevoke = session.can("POST /customer/keys/:key_id/revoke");
  const canUpdate = session.can("PATCH /customer/keys/:key_id");
  const [editing, setEditing] = useState<Key | null>(null);
  const who = useMemberNames(session.account.member_id);
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const list = useLoad(
    () => api<{ keys: Key[]; next_cursor: string | null }>("GET", `/customer/keys?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
    [cursor],
  );
  const pageNumber = pages.number;
  const [revealed, setRevealed] = useState<{ secret: string; label: string } | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [busyKey, setBusyKey] = useState<string | null>(null);
  const form = useSubmit((code) => (code === "invalid_request" ? "label" : undefined));

  const create = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const input = el.elements.namedItem("label") as HTMLInputElement;
    const label = input.value.trim();
    if (!label) return form.fail({ label: "Give the key a name, for example where it is used." });
    if (label.length > 100) return form.fail({ label: "At most 100 characters." });
    return form.run(async () => {
      const key = await api<{ secret: string; label: string }>("POST", "/customer/keys", { json: { label }, idempotencyKey: newIdempotencyKey() });
      input.value = "";
      setRevealed({ secret: key.secret, label: key.label });
      announce(`Key ${key.label} created. Copy its secret now: it is shown only once.`);
      // The new key is the newest: show the first page.
      if (pageNumber === 1) list.reload();
      else pages.first();
    });
  };

  const act = async (key: Key, action: "rotate" | "revoke") => {
    setActionError(null);
    setBusyKey(key.key_id);
    try {
      const overlap = action === "rotate" ? Number((document.getElementById(`overlap-${key.key_id}`) as HTMLSelectElement | null)?.value ?? 0) : 0;
      const reply = await api<{ secret?: string; label?: string }>("POST", `/customer/keys/${encodeURIComponent(key.key_id)}/${action}`, {
        idempotencyKey: newIdempotencyKey(),
        json: overlap > 0 ? { overlap } : undefined,
      });
      if (action === "rotate" && reply.secret) {
        setRevealed({ secret: reply.secret, label: key.label });
        announce(`Key ${key.label} rotated: the old secret ${overlap > 0 ? "works a while longer" : "no longer works"}. Copy the new one now.`);
      } else announce(`Key ${key.label} revoked: requests with it are refused from now on.`);
      // The key edited is no longer the active one (a rotation made a new key): its form would save nothing.
      setEditing((open) => (open?.key_id === key.key_id ? null : open));
      list.reload();
    } catch (error) {
      setActionError(error);
    } finally {
      setBusyKey(null);
    }
  };

  const keys = list.data?.keys ?? [];
  return (
    <section>
      <PageTitle text="API keys" />
      {revealed && <SecretReveal secret={revealed.secret} label={revealed.label} onDone={() => setRevealed(null)} />}
      {canCreate && (
        <section class="panel" aria-labelledby="new-key">
          <h2 id="new-key">Create a key</h2>
          <form onSubmit={create} ref={form.formRef} noValidate class="inline-form">
            <ErrorNotice error={form.error} />
            <Field label="Label" name="label" maxLength={100} required hint="Where the key is used, for example “billing bot”." error={form.fields.label} />
            <button type="submit" class="primary" disabled={form.busy}>
              {form.busy ? "Creating…" : "Create key"}
            </button>
          </form>
        </section>
      )}
      <section class="panel" aria-labelledby="key-list">
        <h2 id="key-list">Your keys</h2>
        <ErrorNotice error={list.error ?? actionError} />
        {list.loading && !list.data ? (
          <Loading what="keys" />
        ) : (
          <div class="table-wrap">
            <table class="stack" data-testid="keys-table">
              <thead>
                <tr>
                  <th scope="col">Label</th>
                  <th scope="col">Status</th>
                  <th scope="col">History</th>
                  <th scope="col">Restrictions</th>
                  {(canRotate || canRevoke || canUpdate) && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {keys.map((key) => (
                  <tr key={key.key_id} data-key-id={key.key_id}>
                    <th scope="row" id={`label-${key.key_id}`}>
                      <span class="wrap">{key.label}</span>
                      <div class="small mono wrap">{key.key_id}</div>
                      <div class="small">
                        secret ends in <span class="mono">…{key.hint}</span>
                      </div>
                    </th>
                    <td data-label="Status">
                      <span class={`badge ${key.status}`}>{key.status}</span>
                      {key.revoked_at && (
                        <div class="small">
                          <When iso={key.revoked_at} />
                        </div>
                      )}
                    </td>
                    <td data-label="History">
                      <div>
                        created <When iso={key.created_at} /> by <span class="wrap">{who(key.created_by)}</span>
                      </div>
                      <div class="small">
                        last used <When iso={key.last_used_at} none="never" />
                      </div>
                      {key.revoked_by && <div class="small wrap">revoked by {who(key.revoked_by)}</div>}
                    </td>
                    <td data-label="Restrictions" class="restrictions">
                      <Restrictions k={key} />
                    </td>
                    {(canRotate || canRevoke || canUpdate) && (
                      <td class="row-actions">
                        {key.status === "active" && (
                          <div class="row-buttons column">
                            {canUpdate && (
                              <button type="button" aria-describedby={`label-${key.key_id}`} onClick={() => setEditing(key)}>
                                Edit
                              </button>
                            )}
                            {canRotate && (
                              <ConfirmButton
                                label="Rotate"
                                describedBy={`label-${key.key_id}`}
                                title={`Rotate “${key.label}”?`}
                                body={
                                  <>
                                    <p>A new secret replaces this one, with the same label and restrictions. Update everything that uses it.</p>
                                    <label for={`overlap-${key.key_id}`}>Keep the current secret working</label>
                                    <select id={`overlap-${key.key_id}`} defaultValue="0">
                                      {OVERLAPS.map(([seconds, text]) => (
                                        <option key={seconds} value={String(seconds)}>
                                          {text}
                                        </option>
                                      ))}
                                    </select>
                                  </>
                                }
                                confirm="Rotate key"
                                disabled={busyKey === key.key_id}
                                onConfirm={() => act(key, "rotate")}
                              />
                            )}
                            {canRevoke && (
                              <ConfirmButton
                                label="Revoke"
                                danger
                                describedBy={`label-${key.key_id}`}
                                title={`Revoke “${key.label}”?`}
                                body={<p>Requests with this key are refused from now on. This cannot be undone.</p>}
                                confirm="Revoke key"
                                disabled={busyKey === key.key_id}
                                onConfirm={() => act(key, "revoke")}
                              />
                            )}
                          </div>
                        )}
                        {key.status === "revoked" && key.overlap_until && Date.parse(key.overlap_until) > Date.now() && canRevoke && (
                          <ConfirmButton
                            label="End overlap"
                            danger
                            describedBy={`label-${key.key_id}`}
                            title={`Stop the old secret of “${key.label}” now?`}
                            body={<p>Its rotation kept it working for a while; from now on requests with it are refused.</p>}
                            confirm="End overlap"
                            disabled={busyKey === key.key_id}
                            onConfirm={() => act(key, "revoke")}
                          />
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {(pageNumber > 1 || list.data?.next_cursor) && <Pager label="Key pages" pages={pages} next={list.data?.next_cursor} loading={list.loading} />}
      </section>
      {editing && (
        <KeyEditor
          key={editing.key_id}
          k={editing}
          onDone={(saved) => {
            setEditing(null);
            if (saved) list.reload();
          }}
        />
      )}
    </section>
  );
}
