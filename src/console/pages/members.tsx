// /console/members: the people of this tenant and their roles; for admins, invitations, role
// changes and removals (whose dialog lists the keys the member created, with a choice to revoke
// them too); for owners, the tenant's settings; for everyone, leaving (docs/api.md, "Teams"). The
// server decides every change (an admin cannot touch an owner, the last owner stays): buttons
// that could only be refused are not shown, and a refusal is shown where it happened.
import { useState } from "preact/hooks";
import { api, newIdempotencyKey, setSessionToken } from "../app/api.ts";
import type { Session } from "../app/session.ts";
import { BASE, navigate } from "../app/router.tsx";
import { announce, ConfirmButton, ErrorNotice, Field, Loading, PageTitle, useLoad, useSubmit, When } from "../app/ui.tsx";
import { ROLES, type Role } from "../../accounts/roles.ts";

interface MemberKey {
  key_id: string;
  label: string;
  hint: string;
}

interface Member {
  member_id: string;
  email: string;
  role: Role;
  joined_at: string;
  mfa_enabled: boolean;
  /** The keys this member created that still work. */
  keys: (MemberKey & { created_at: string })[];
}

interface Invitation {
  invitation_id: string;
  email: string;
  role: Role;
  created_at: string;
  expires_at: string;
  status: "pending" | "accepted" | "revoked" | "expired";
}

interface Settings {
  require_mfa: boolean;
  allow_self_approval: boolean;
  revoke_keys_on_member_removal: boolean;
}

const ROLE_TEXT: Record<Role, string> = {
  owner: "everything, including plan upgrades, owners and the tenant's settings",
  admin: "members other than owners, keys, publishing policy",
  developer: "keys, policy drafts, tests, impact and simulate",
  approver: "votes on approvals; reads receipts and the audit trail",
  viewer: "reads everything, changes nothing",
};

/** The roles `me` may give: owners any, admins any but owner. */
const grantable = (me: Role): Role[] => ROLES.filter((r) => (me === "owner" ? true : r !== "owner"));

export function MembersPage({ session }: { session: Session }) {
  const me = session.account;
  const canManage = session.can("PATCH /customer/members/:member_id");
  const canInvite = session.can("POST /customer/members/invitations");
  const members = useLoad(() => api<{ members: Member[] }>("GET", "/customer/members"));
  const invitations = useLoad(() => (canInvite ? api<{ invitations: Invitation[] }>("GET", "/customer/members/invitations") : Promise.resolve({ invitations: [] })));
  const settings = useLoad(() => api<{ settings: Settings }>("GET", "/customer/settings"));
  // Whether a removal revokes the member's keys, by member (the tenant's setting: always).
  const [revokeKeys, setRevokeKeys] = useState<Record<string, boolean>>({});
  const alwaysRevoke = settings.data?.settings.revoke_keys_on_member_removal === true;
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const act = async (id: string, action: () => Promise<void>) => {
    setActionError(null);
    setBusy(id);
    try {
      await action();
    } catch (error) {
      setActionError(error);
    } finally {
      setBusy(null);
    }
  };

  const setRole = (m: Member, role: Role) =>
    act(m.member_id, async () => {
      await api("PATCH", `/customer/members/${encodeURIComponent(m.member_id)}`, { json: { role } });
      announce(`${m.email} is now ${role}. Their sessions of this tenant ended; they log in again with the new role.`);
      members.reload();
    });

  const remove = (m: Member) =>
    act(m.member_id, async () => {
      const query = revokeKeys[m.member_id] ? "?revoke_keys=true" : "";
      const reply = await api<{ revoked_keys: MemberKey[]; kept_keys: MemberKey[] }>("DELETE", `/customer/members/${encodeURIComponent(m.member_id)}${query}`);
      const keys = keysOutcome(reply);
      if (m.member_id === me.member_id) {
        // Leaving ends this session too: log in again (to another tenant, if there is one).
        setSessionToken(null);
        navigate(`${BASE}/login`, true);
        announce(`You left the tenant.${keys}`);
        return;
      }
      announce(`${m.email} was removed: their sessions of this tenant ended.${keys}`);
      members.reload();
    });

  /** The dialog's part about the member's keys: which they are, and a choice to revoke them with the removal. */
  const keysChoice = (m: Member) =>
    m.keys.length === 0 ? (
      <p>{m.member_id === me.member_id ? "You created" : "They created"} no key that still works.</p>
    ) : (
      <>
        <p>{m.member_id === me.member_id ? "Keys you created" : "Keys they created"}, which keep working after the removal unless revoked:</p>
        <ul data-testid="member-keys">
          {m.keys.map((k) => (
            <li key={k.key_id}>
              {k.label} <span class="small mono">{k.key_id} …{k.hint}</span>
            </li>
          ))}
        </ul>
        <div class="check">
          <input
            type="checkbox"
            id={`revoke-${m.member_id}`}
            checked={alwaysRevoke || revokeKeys[m.member_id] === true}
            disabled={alwaysRevoke}
            onChange={(e) => setRevokeKeys({ ...revokeKeys, [m.member_id]: (e.currentTarget as HTMLInputElement).checked })}
          />
          <label for={`revoke-${m.member_id}`}>
            {alwaysRevoke ? "Revoked with the removal: this tenant's settings revoke a removed member's keys." : `Revoke ${m.keys.length === 1 ? "this key" : `these ${m.keys.length} keys`} too`}
          </label>
        </div>
      </>
    );

  const revoke = (inv: Invitation) =>
    act(inv.invitation_id, async () => {
      await api("POST", `/customer/members/invitations/${encodeURIComponent(inv.invitation_id)}/revoke`, { idempotencyKey: newIdempotencyKey() });
      announce(`The invitation of ${inv.email} was revoked: its link no longer works.`);
      invitations.reload();
    });

  const list = members.data?.members ?? [];
  const pending = (invitations.data?.invitations ?? []).filter((i) => i.status === "pending");
  // The last owner cannot leave (the server refuses it): no button that could only fail.
  const lastOwner = me.role === "owner" && list.filter((m) => m.role === "owner").length === 1;
  // Another member this session may change: admins change anyone but owners, owners anyone.
  const mayChange = (m: Member) => canManage && m.member_id !== me.member_id && (m.role !== "owner" || me.role === "owner");

  return (
    <section>
      <PageTitle text="Members" />
      <p>
        The people who share this tenant. You are <strong>{me.role}</strong>: {ROLE_TEXT[me.role]}.
      </p>
      {canInvite && <InviteForm me={me.role} onInvited={invitations.reload} />}
      <section class="panel" aria-labelledby="member-list">
        <h2 id="member-list">People</h2>
        <ErrorNotice error={members.error ?? actionError} />
        {members.loading && !members.data ? (
          <Loading what="members" />
        ) : (
          <div class="table-wrap">
            <table class="stack" data-testid="members-table">
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">Role</th>
                  <th scope="col">Second factor</th>
                  <th scope="col">Keys made</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.map((m) => (
                  <tr key={m.member_id} data-member-id={m.member_id}>
                    <th scope="row" id={`m-${m.member_id}`}>
                      {m.email}
                      {m.member_id === me.member_id && <span class="small"> (you)</span>}
                      <div class="small mono">{m.member_id}</div>
                      {/* When they joined sits with who they are: one column fewer keeps the table within its panel. */}
                      <div class="small">
                        joined <When iso={m.joined_at} />
                      </div>
                    </th>
                    <td data-label="Role">
                      {mayChange(m) ? <RoleChoice member={m} me={me.role} busy={busy === m.member_id} onChange={(role) => setRole(m, role)} /> : <span class={`badge role-${m.role}`}>{m.role}</span>}
                    </td>
                    <td data-label="Second factor">{m.mfa_enabled ? "on" : "off"}</td>
                    <td data-label="Keys made" title={m.keys.map((k) => k.label).join(", ") || undefined}>
                      {m.keys.length === 0 ? "none" : m.keys.length}
                    </td>
                    <td class="row-actions">
                      {m.member_id === me.member_id ? (
                        lastOwner ? (
                          <span class="small">the last owner stays</span>
                        ) : (
                          <ConfirmButton
                            label="Leave"
                            danger
                            describedBy={`m-${m.member_id}`}
                            title="Leave this tenant?"
                            body={
                              <>
                                <p>You lose access to it at once; an admin can invite you again. The last owner cannot leave: make someone else an owner first.</p>
                                {keysChoice(m)}
                              </>
                            }
                            confirm="Leave tenant"
                            disabled={busy === m.member_id}
                            onConfirm={() => void remove(m)}
                          />
                        )
                      ) : (
                        mayChange(m) && (
                          <ConfirmButton
                            label="Remove"
                            danger
                            describedBy={`m-${m.member_id}`}
                            title={`Remove ${m.email}?`}
                            body={
                              <>
                                <p>Their sessions of this tenant end on their next request.</p>
                                {keysChoice(m)}
                              </>
                            }
                            confirm="Remove member"
                            disabled={busy === m.member_id}
                            onConfirm={() => void remove(m)}
                          />
                        )
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {canInvite && (
        <section class="panel" aria-labelledby="pending-invitations">
          <h2 id="pending-invitations">Pending invitations</h2>
          <ErrorNotice error={invitations.error} />
          {invitations.loading && !invitations.data ? (
            <Loading what="invitations" />
          ) : pending.length === 0 ? (
            <p data-testid="no-invitations">None: every invitation was accepted, revoked or has expired.</p>
          ) : (
            <div class="table-wrap">
              <table class="stack" data-testid="invitations-table">
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Sent</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {pending.map((inv) => (
                    <tr key={inv.invitation_id} data-invitation-id={inv.invitation_id}>
                      <th scope="row" id={`i-${inv.invitation_id}`}>
                        {inv.email}
                      </th>
                      <td data-label="Role">{inv.role}</td>
                      <td data-label="Sent">
                        <When iso={inv.created_at} />
                      </td>
                      <td data-label="Expires">
                        <When iso={inv.expires_at} />
                      </td>
                      <td class="row-actions">
                        <ConfirmButton
                          label="Revoke"
                          danger
                          describedBy={`i-${inv.invitation_id}`}
                          title={`Revoke the invitation of ${inv.email}?`}
                          body={<p>Its link stops working at once. You can invite the address again.</p>}
                          confirm="Revoke invitation"
                          disabled={busy === inv.invitation_id}
                          onConfirm={() => void revoke(inv)}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      )}
      <SettingsPanel editable={session.can("PUT /customer/settings")} onSaved={settings.reload} />
    </section>
  );
}

function RoleChoice({ member, me, busy, onChange }: { member: Member; me: Role; busy: boolean; onChange: (role: Role) => void }) {
  const [role, setRole] = useState<Role>(member.role);
  const id = `role-${member.member_id}`;
  return (
    <div class="role-choice">
      <label for={id} class="visually-hidden">
        Role of {member.email}
      </label>
      <select id={id} value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as Role)} disabled={busy}>
        {grantable(me).map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
      {role !== member.role && (
        <button type="button" onClick={() => onChange(role)} disabled={busy}>
          {busy ? "Saving…" : "Save role"}
        </button>
      )}
    </div>
  );
}

function InviteForm({ me, onInvited }: { me: Role; onInvited: () => void }) {
  const form = useSubmit((code) => (["invalid_email", "disposable_email", "already_member"].includes(code) ? "email" : undefined));
  const [sent, setSent] = useState<string | null>(null);
  const [role, setRole] = useState<Role>("developer");
  const invite = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const email = (el.elements.namedItem("email") as HTMLInputElement).value.trim();
    const invited = (el.elements.namedItem("role") as HTMLSelectElement).value;
    setSent(null);
    if (!email) return form.fail({ email: "Enter the address to invite." });
    return form.run(async () => {
      const reply = await api<{ email: string; role: Role; expires_at: string }>("POST", "/customer/members/invitations", { json: { email, role: invited }, idempotencyKey: newIdempotencyKey() });
      (el.elements.namedItem("email") as HTMLInputElement).value = "";
      setSent(`Invitation sent to ${reply.email} as ${reply.role}. The link works once, for 7 days.`);
      announce(`Invitation sent to ${reply.email}.`);
      onInvited();
    });
  };
  return (
    <section class="panel" aria-labelledby="invite">
      <h2 id="invite">Invite someone</h2>
      <form onSubmit={invite} ref={form.formRef} noValidate class="inline-form">
        <ErrorNotice error={form.error} />
        <Field label="Email" name="email" type="email" autoComplete="off" required error={form.fields.email} />
        <div class="field">
          <label for="invite-role">Role</label>
          {/* The role's name in the select, what it may do below it: a phone's select cuts long options. */}
          <select id="invite-role" name="role" value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as Role)} aria-describedby="invite-role-text">
            {grantable(me).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <p class="hint" id="invite-role-text" data-testid="invite-role-text">
            {role}: {ROLE_TEXT[role]}
          </p>
        </div>
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? "Sending…" : "Send invitation"}
        </button>
      </form>
      {sent && (
        <p class="notice success" data-testid="invitation-sent">
          {sent}
        </p>
      )}
    </section>
  );
}

/** What became of a removed member's keys, for the announcement. */
function keysOutcome(reply: { revoked_keys: MemberKey[]; kept_keys: MemberKey[] }): string {
  const names = (keys: MemberKey[]) => keys.map((k) => k.label).join(", ");
  if (reply.revoked_keys.length > 0) return ` Revoked: ${names(reply.revoked_keys)}.`;
  if (reply.kept_keys.length > 0) return ` These keys keep working: ${names(reply.kept_keys)}.`;
  return "";
}

function SettingsPanel({ editable, onSaved }: { editable: boolean; onSaved: () => void }) {
  const loaded = useLoad(() => api<{ settings: Settings }>("GET", "/customer/settings"));
  const form = useSubmit();
  const settings = loaded.data?.settings;
  const save = (event: Event) => {
    event.preventDefault();
    const el = event.currentTarget as HTMLFormElement;
    const checked = (name: string) => (el.elements.namedItem(name) as HTMLInputElement).checked;
    return form.run(async () => {
      await api("PUT", "/customer/settings", {
        json: { require_mfa: checked("require_mfa"), allow_self_approval: checked("allow_self_approval"), revoke_keys_on_member_removal: checked("revoke_keys_on_member_removal") },
      });
      announce("Settings saved.");
      loaded.reload();
      onSaved();
    });
  };
  return (
    <section class="panel" aria-labelledby="settings">
      <h2 id="settings">Tenant settings</h2>
      <ErrorNotice error={loaded.error ?? form.error} />
      {!settings ? (
        <Loading what="settings" />
      ) : (
        <form onSubmit={save} ref={form.formRef} noValidate data-testid="settings-form">
          <fieldset disabled={!editable || form.busy}>
            <legend class="visually-hidden">Tenant settings</legend>
            <div class="check">
              <input type="checkbox" id="require_mfa" name="require_mfa" defaultChecked={settings.require_mfa} />
              <label for="require_mfa">Require a second factor: a member without one can only enrol one until they do.</label>
            </div>
            <div class="check">
              <input type="checkbox" id="allow_self_approval" name="allow_self_approval" defaultChecked={settings.allow_self_approval} />
              <label for="allow_self_approval">Allow self-approval: in a tenant of one member, its owner may approve actions of keys they created (the vote says so).</label>
            </div>
            <div class="check">
              <input type="checkbox" id="revoke_keys_on_member_removal" name="revoke_keys_on_member_removal" defaultChecked={settings.revoke_keys_on_member_removal} />
              <label for="revoke_keys_on_member_removal">Revoke a removed member's keys: removing a member (or leaving) always revokes the keys they created.</label>
            </div>
          </fieldset>
          {editable ? (
            <button type="submit" class="primary" disabled={form.busy}>
              {form.busy ? "Saving…" : "Save settings"}
            </button>
          ) : (
            <p class="small">Only an owner changes these.</p>
          )}
        </form>
      )}
    </section>
  );
}
