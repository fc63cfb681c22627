// The tenant switcher in the header: a person who is a member of several tenants (docs/api.md,
// "Teams") picks one; POST /auth/switch answers a session of it, which replaces this tab's.
import { useState } from "preact/hooks";
import { api, setSessionToken } from "./api.ts";
import { announce, ErrorNotice, useLoad } from "./ui.tsx";

interface Tenant {
  tenant_id: string;
  role: string;
  contact_email: string | null;
  current: boolean;
}

export const tenantName = (t: Pick<Tenant, "tenant_id" | "contact_email">) => (t.contact_email ? `${t.contact_email}'s tenant` : t.tenant_id);

export function TenantSwitcher({ current }: { current: string }) {
  const list = useLoad(() => api<{ tenants: Tenant[] }>("GET", "/auth/tenants"), [current]);
  const [state, setState] = useState<{ busy: boolean; error?: unknown }>({ busy: false });
  const tenants = list.data?.tenants ?? [];
  // One tenant: nothing to choose.
  if (tenants.length < 2) return null;
  const chosen = tenants.find((t) => t.tenant_id === current);

  const choose = async (event: Event) => {
    const tenantId = (event.currentTarget as HTMLSelectElement).value;
    if (tenantId === current) return;
    setState({ busy: true });
    try {
      const session = await api<{ token: string }>("POST", "/auth/switch", { json: { tenant_id: tenantId } });
      const picked = tenants.find((t) => t.tenant_id === tenantId)!;
      setSessionToken(session.token);
      setState({ busy: false });
      announce(`Switched to ${tenantName(picked)}, as ${picked.role}.`);
    } catch (error) {
      setState({ busy: false, error });
    }
  };

  return (
    <div class="tenant-switcher" data-testid="tenant-switcher">
      <label for="tenant-select">Tenant</label>
      <select id="tenant-select" value={current} onChange={choose} disabled={state.busy}>
        {tenants.map((t) => (
          <option key={t.tenant_id} value={t.tenant_id}>
            {tenantName(t)} ({t.role})
          </option>
        ))}
      </select>
      {/* On a phone the select may cut a long name: the whole of it, on lines of its own. */}
      {chosen && (
        <p class="tenant-current small" aria-hidden="true">
          {tenantName(chosen)}, as {chosen.role}
        </p>
      )}
      <ErrorNotice error={state.error} />
    </div>
  );
}
