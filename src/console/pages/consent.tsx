// /console/consent: where an agent's authorization request (GET /oauth/authorize) brings the
// person (docs/api.md, "OAuth for agents"). It names the agent, the gateway and its tenant and what
// the agent may do, and sends the person's answer; the browser then goes to the agent's redirect
// URI with the one-time code (or access_denied). The request's parameters are this page's query,
// checked again by the server at each step.
import { api } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { ErrorNotice, Loading, Notice, PageTitle, useLoad, useSubmit } from "../app/ui.tsx";

interface Details {
  client: { client_id: string; client_name: string; client_uri: string | null; kind: "registered" | "metadata_document" };
  gateway: { gateway_id: string; name: string; tenant_id: string; resource: string };
  redirect_uri: string;
  scope: string;
  member: { member_id: string; role: string };
}

const PARAMS = ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope", "resource"] as const;

export function ConsentPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const request: Record<string, string> = {};
  for (const name of PARAMS) {
    const value = query.get(name);
    if (value !== null) request[name] = value;
  }
  const details = useLoad(() => api<Details>("GET", `/oauth/consent?${new URLSearchParams(request)}`), [query.toString()]);
  const answer = useSubmit();
  const send = (approve: boolean) =>
    answer.run(async () => {
      const done = await api<{ redirect_to: string }>("POST", "/oauth/consent", { json: { ...request, approve } });
      // Only ever the agent's registered redirect URI, as the server checked it.
      location.assign(done.redirect_to);
    });
  const d = details.data;
  return (
    <section>
      <PageTitle text="Sign in an agent" />
      <ErrorNotice error={details.error} />
      {details.loading && !d ? (
        <Loading what="the agent's request" />
      ) : d ? (
        <div class="panel" data-testid="consent">
          <p>
            <strong data-testid="consent-client">{d.client.client_name}</strong> asks to use the remote gateway{" "}
            <strong data-testid="consent-gateway">{d.gateway.name}</strong> of tenant <code>{d.gateway.tenant_id}</code> as you ({session.account.email}, {d.member.role}).
          </p>
          <dl>
            <dt>Agent</dt>
            <dd class="mono wrap">{d.client.client_id}</dd>
            {d.client.client_uri && (
              <>
                <dt>Its site</dt>
                <dd class="mono wrap">{d.client.client_uri}</dd>
              </>
            )}
            <dt>Gateway</dt>
            <dd class="mono wrap">{d.gateway.resource}</dd>
            <dt>Returns to</dt>
            <dd class="mono wrap">{d.redirect_uri}</dd>
          </dl>
          <p>
            It may list the gateway's tools and call them in your name. Each call is decided by your tenant's policy with your role, may wait for an approval, and is
            recorded as a signed receipt naming you and the agent. You can revoke this at any time under Agents.
          </p>
          {d.client.kind === "registered" && <Notice kind="warning">This agent registered itself: its name is its own claim. Continue only if you started this sign-in.</Notice>}
          <ErrorNotice error={answer.error} />
          <div class="actions">
            <button type="button" onClick={() => send(false)} disabled={answer.busy}>
              Refuse
            </button>
            <button type="button" class="primary" onClick={() => send(true)} disabled={answer.busy} data-testid="consent-allow">
              Allow
            </button>
          </div>
        </div>
      ) : null}
    </section>
  );
}
