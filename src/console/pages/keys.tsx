// /console/keys: create (secret shown once), list (newest first, page by page) with hints, last
// use and the member who made or ended each key, rotate, revoke. Roles that may only read see the
// list without its buttons.
import { useState } from "preact/hooks";
import { api, newIdempotencyKey } from "../app/api.ts";
import type { Session } from "../app/app.tsx";
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
}

const PAGE_SIZE = 20;

export function KeysPage({ session }: { session: Session }) {
  const canCreate = session.can("POST /customer/keys");
  const canRotate = session.can("POST /customer/keys/:key_id/rotate");
  const canRevoke = session.can("POST /customer/keys/:key_id/revoke");
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
      const reply = await api<{ secret?: string; label?: string }>("POST", `/customer/keys/${encodeURIComponent(key.key_id)}/${action}`, { idempotencyKey: newIdempotencyKey() });
      if (action === "rotate" && reply.secret) {
        setRevealed({ secret: reply.secret, label: key.label });
        announce(`Key ${key.label} rotated: the old secret no longer works. Copy the new one now.`);
      } else announce(`Key ${key.label} revoked: requests with it are refused from now on.`);
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
                  <th scope="col">Secret ends in</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Created by</th>
                  {(canRotate || canRevoke) && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {keys.map((key) => (
                  <tr key={key.key_id} data-key-id={key.key_id}>
                    <th scope="row" id={`label-${key.key_id}`}>
                      {key.label}
                      <div class="small mono">{key.key_id}</div>
                    </th>
                    <td class="mono" data-label="Secret ends in">…{key.hint}</td>
                    <td data-label="Status">
                      <span class={`badge ${key.status}`}>{key.status}</span>
                      {key.revoked_at && (
                        <div class="small">
                          <When iso={key.revoked_at} />
                        </div>
                      )}
                    </td>
                    <td data-label="Created">
                      <When iso={key.created_at} />
                    </td>
                    <td data-label="Last used">
                      <When iso={key.last_used_at} none="never" />
                    </td>
                    <td data-label="Created by">
                      {who(key.created_by)}
                      {key.revoked_by && <div class="small">revoked by {who(key.revoked_by)}</div>}
                    </td>
                    {(canRotate || canRevoke) && (
                      <td class="row-actions">
                        {key.status === "active" && (
                          <div class="row-buttons">
                            {canRotate && (
                              <ConfirmButton
                                label="Rotate"
                                describedBy={`label-${key.key_id}`}
                                title={`Rotate “${key.label}”?`}
                                body={<p>A new secret replaces this one. The current secret stops working at once, so update everything that uses it.</p>}
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
    </section>
  );
}
