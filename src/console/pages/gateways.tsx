// /console/gateways: the tenant's remote MCP gateways (docs/api.md, "Remote MCP gateways";
// docs/mcp.md, "Remote gateways"): register one (a name, the upstream's https URL, how warden
// authenticates to it), see the URL to give agents' clients, disable, enable and delete; and, for
// a per-member upstream, set or erase one's own secret (never shown back). Roles that may only
// read see the gateways and are told who may change them.
import { useState } from "preact/hooks";
import { api, newIdempotencyKey } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { announce, ConfirmButton, ErrorNotice, Field, Loading, Notice, PageTitle, useLoad, useSubmit, When } from "../app/ui.tsx";

type UpstreamAuth = "none" | "shared" | "per_member";

interface Gateway {
  gateway_id: string;
  name: string;
  url: string;
  upstream_url: string;
  upstream_auth: UpstreamAuth;
  status: "active" | "disabled";
  created_at: string;
  member_secret_set: boolean;
}

const AUTH_TEXT: Record<UpstreamAuth, string> = {
  none: "no credentials",
  shared: "one shared secret",
  per_member: "each member's own secret",
};

function CreateForm({ onCreated }: { onCreated: (gateway: Gateway) => void }) {
  const form = useSubmit((code) => (code === "name_taken" ? "name" : code === "invalid_request" ? "upstream_url" : undefined));
  const [auth, setAuth] = useState<UpstreamAuth>("none");
  const create = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const value = (name: string) => ((el.elements.namedItem(name) as HTMLInputElement | null)?.value ?? "").trim();
    const name = value("name");
    const upstream_url = value("upstream_url");
    const secret = value("secret");
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(name)) return form.fail({ name: "Lowercase letters, digits, - and _, starting with a letter or digit (at most 63)." });
    if (!/^https:\/\/\S+$/i.test(upstream_url)) return form.fail({ upstream_url: "An address that starts with https:// and names the MCP server's host." });
    if (auth === "shared" && secret === "") return form.fail({ secret: "The secret warden sends the upstream." });
    return form.run(async () => {
      const gateway = await api<Gateway>("POST", "/customer/mcp/gateways", {
        json: { name, upstream_url, upstream_auth: auth, ...(auth === "shared" ? { secret } : {}) },
        idempotencyKey: newIdempotencyKey(),
      });
      el.reset();
      setAuth("none");
      onCreated(gateway);
    });
  };
  return (
    <section class="panel" aria-labelledby="new-gateway">
      <h2 id="new-gateway">Register an MCP server</h2>
      <form onSubmit={create} ref={form.formRef} noValidate>
        <ErrorNotice error={form.error} />
        <Field label="Name" name="name" maxLength={63} required hint="Actions through it are mcp.<name>.<tool>, as your policy names them." error={form.fields.name} />
        <Field label="Upstream URL" name="upstream_url" type="url" inputMode="url" maxLength={2000} required hint="The MCP server's Streamable HTTP endpoint: https only, on a public host." error={form.fields.upstream_url} />
        <fieldset>
          <legend>How warden signs in to it</legend>
          {(["none", "shared", "per_member"] as const).map((option) => (
            <div class="check" key={option}>
              <input type="radio" id={`auth-${option}`} name="upstream_auth" value={option} checked={auth === option} onChange={() => setAuth(option)} />
              <label for={`auth-${option}`}>{option === "none" ? "No credentials" : option === "shared" ? "One shared secret" : "Each member's own secret (the tool is called as that person)"}</label>
            </div>
          ))}
        </fieldset>
        {auth === "shared" && <Field label="Shared secret" name="secret" type="password" autoComplete="off" maxLength={4096} hint="Sent as Authorization: Bearer; stored sealed, never shown again." error={form.fields.secret} />}
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Registering…" : "Register"}
        </button>
      </form>
    </section>
  );
}

/** The caller's own secret for a per-member gateway: set or replaced, or erased. */
function OwnSecret({ gateway, onChanged }: { gateway: Gateway; onChanged: () => void }) {
  const form = useSubmit(() => "secret");
  const save = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const secret = ((el.elements.namedItem("secret") as HTMLInputElement).value ?? "").trim();
    if (secret === "") return form.fail({ secret: "Your secret for this server (a token of yours)." });
    return form.run(async () => {
      await api("PUT", `/customer/mcp/gateways/${encodeURIComponent(gateway.gateway_id)}/secret`, { json: { secret } });
      el.reset();
      announce(`Your secret for ${gateway.name} is stored.`);
      onChanged();
    });
  };
  return (
    <form onSubmit={save} ref={form.formRef} noValidate class="inline-form">
      <ErrorNotice error={form.error} />
      <Field
        label={gateway.member_secret_set ? "Replace your secret" : "Your secret"}
        name="secret"
        type="password"
        autoComplete="off"
        maxLength={4096}
        hint="Your agents' calls through this gateway reach the server with it. Stored sealed, never shown back."
        error={form.fields.secret}
      />
      <button type="submit" disabled={form.busy}>
        {form.busy ? "Saving…" : "Save secret"}
      </button>
    </form>
  );
}

export function GatewaysPage({ session }: { session: Session }) {
  const canCreate = session.can("POST /customer/mcp/gateways");
  const canToggle = session.can("PATCH /customer/mcp/gateways/:id");
  const canDelete = session.can("DELETE /customer/mcp/gateways/:id");
  const list = useLoad(() => api<{ gateways: Gateway[] }>("GET", "/customer/mcp/gateways"));
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const gateways = list.data?.gateways ?? [];

  const act = async (gateway: Gateway, action: "disable" | "enable" | "delete" | "erase") => {
    setActionError(null);
    setBusy(gateway.gateway_id);
    const path = `/customer/mcp/gateways/${encodeURIComponent(gateway.gateway_id)}`;
    try {
      if (action === "delete") {
        await api("DELETE", path);
        announce(`Gateway ${gateway.name} deleted: its URL answers nothing more.`);
      } else if (action === "erase") {
        await api("DELETE", `${path}/secret`);
        announce(`Your secret for ${gateway.name} is erased.`);
      } else {
        await api("PATCH", path, { json: { enabled: action === "enable" } });
        announce(action === "enable" ? `Gateway ${gateway.name} serves again.` : `Gateway ${gateway.name} disabled: its URL refuses every request.`);
      }
      list.reload();
    } catch (error) {
      setActionError(error);
    } finally {
      setBusy(null);
    }
  };

  return (
    <section>
      <PageTitle text="MCP gateways" />
      <p>
        Warden serves each MCP server registered here at a URL of its own. Add that URL to an agent's client (Claude, ChatGPT, an IDE) as a remote MCP server: each person signs in with their warden account and consents, and every tool call is decided by
        your policy, with a receipt naming the person, the agent and the gateway. The client's token never reaches the server.
      </p>
      {canCreate ? (
        <CreateForm
          onCreated={(gateway) => {
            announce(`Gateway ${gateway.name} registered at ${gateway.url}.`);
            list.reload();
          }}
        />
      ) : (
        <Notice>
          <p data-testid="gateways-read-only">You are a {session.account.role} here: you see the gateways and set your own secrets. Registering, disabling and deleting them is for an admin or the owner.</p>
        </Notice>
      )}
      <section class="panel" aria-labelledby="gateway-list">
        <h2 id="gateway-list">Gateways</h2>
        <ErrorNotice error={list.error ?? actionError} />
        {list.loading && !list.data ? (
          <Loading what="gateways" />
        ) : gateways.length === 0 ? (
          <p data-testid="no-gateways">No gateways yet.</p>
        ) : (
          <ul class="endpoints" data-testid="gateways-list">
            {gateways.map((gateway) => (
              <li key={gateway.gateway_id} class="endpoint" data-gateway-id={gateway.gateway_id}>
                <p class="endpoint-url" id={`gw-${gateway.gateway_id}`}>
                  <strong>{gateway.name}</strong> <span class={`badge ${gateway.status}`}>{gateway.status}</span>
                </p>
                <p class="small">
                  Connect agents to <span class="mono wrap" data-testid="gateway-url">{gateway.url}</span>
                </p>
                <p class="small">
                  Upstream <span class="mono wrap">{gateway.upstream_url}</span> · {AUTH_TEXT[gateway.upstream_auth]} · registered <When iso={gateway.created_at} />
                </p>
                {gateway.upstream_auth === "per_member" && (
                  <>
                    <p class="small" data-testid="own-secret-state">
                      {gateway.member_secret_set ? "Your secret is stored." : "You have not stored your secret: your agents' calls through this gateway are refused until you do."}
                    </p>
                    <OwnSecret gateway={gateway} onChanged={list.reload} />
                  </>
                )}
                <div class="row-buttons">
                  {gateway.upstream_auth === "per_member" && gateway.member_secret_set && (
                    <button type="button" aria-describedby={`gw-${gateway.gateway_id}`} disabled={busy === gateway.gateway_id} onClick={() => act(gateway, "erase")}>
                      Erase my secret
                    </button>
                  )}
                  {canToggle && (
                    <button type="button" aria-describedby={`gw-${gateway.gateway_id}`} disabled={busy === gateway.gateway_id} onClick={() => act(gateway, gateway.status === "active" ? "disable" : "enable")}>
                      {gateway.status === "active" ? "Disable" : "Enable"}
                    </button>
                  )}
                  {canDelete && (
                    <ConfirmButton
                      label="Delete"
                      danger
                      describedBy={`gw-${gateway.gateway_id}`}
                      title={`Delete the gateway ${gateway.name}?`}
                      body={<p>Its URL answers nothing more, its secrets and every member's secret for it are erased, and its key is revoked. Receipts keep naming it. This cannot be undone.</p>}
                      confirm="Delete gateway"
                      disabled={busy === gateway.gateway_id}
                      onConfirm={() => act(gateway, "delete")}
                    />
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </section>
  );
}
