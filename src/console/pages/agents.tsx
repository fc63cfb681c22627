// /console/agents: the agents people signed in to the tenant's remote gateways (docs/api.md,
// "OAuth for agents"): a member's own grants, an admin's or owner's every member's, each with a
// button that revokes it (every token of it stops working at once).
import { api } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { announce, ConfirmButton, ErrorNotice, Loading, PageTitle, useLoad, useSubmit, When } from "../app/ui.tsx";

interface Grant {
  grant_id: string;
  gateway_id: string;
  gateway_name: string | null;
  member_id: string;
  member_email: string | null;
  client_id: string;
  client_name: string;
  status: "active" | "revoked";
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  revoked_reason: string | null;
}

export function AgentsPage({ session }: { session: Session }) {
  const listing = useLoad(() => api<{ grants: Grant[] }>("GET", "/customer/oauth/grants"));
  const revoke = useSubmit();
  const all = session.account.role === "owner" || session.account.role === "admin";
  const grants = listing.data?.grants ?? [];
  const revokeGrant = (grant: Grant) =>
    revoke.run(async () => {
      await api("DELETE", `/customer/oauth/grants/${grant.grant_id}`);
      announce(`${grant.client_name} is signed out of ${grant.gateway_name ?? grant.gateway_id}.`);
      listing.reload();
    });
  return (
    <section>
      <PageTitle text="Agents" />
      <p>{all ? "Every agent a member of this tenant signed in to a remote gateway." : "The agents you signed in to this tenant's remote gateways."}</p>
      <ErrorNotice error={listing.error ?? revoke.error} />
      {listing.loading && !listing.data ? (
        <Loading what="the agents" />
      ) : grants.length === 0 ? (
        <p data-testid="agents-empty">No agent has been signed in yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" data-testid="agents-table">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Gateway</th>
                {all && <th scope="col">Person</th>}
                <th scope="col">Signed in</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {grants.map((g) => (
                <tr key={g.grant_id}>
                  <th scope="row">
                    {g.client_name}
                    <div class="small mono wrap">{g.client_id}</div>
                  </th>
                  <td data-label="Gateway">{g.gateway_name ?? g.gateway_id}</td>
                  {all && <td data-label="Person">{g.member_email ?? g.member_id}</td>}
                  <td data-label="Signed in">
                    <When iso={g.created_at} />
                  </td>
                  <td data-label="Last used">
                    <When iso={g.last_used_at} />
                  </td>
                  <td data-label="Status">{g.status === "active" ? "active" : `revoked (${(g.revoked_reason ?? "").replaceAll("_", " ")})`}</td>
                  <td>
                    {g.status === "active" && (
                      <ConfirmButton
                        label="Revoke"
                        danger
                        title={`Revoke ${g.client_name}?`}
                        body={<p>Its tokens stop working at once; it must be signed in again to use {g.gateway_name ?? "the gateway"}.</p>}
                        confirm="Revoke"
                        onConfirm={() => revokeGrant(g)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
