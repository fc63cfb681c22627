// What the console shell hands every signed-in page: the account and the session's role. In a
// module of its own so that the pages and the shell that mounts them do not import each other.
import { requiredRole, roleAtLeast, type Role } from "../../accounts/roles.ts";

export interface Account {
  tenant_id: string;
  email: string;
  email_verified: boolean;
  plan: string;
  created_at: string;
  mfa_enabled: boolean;
  /** The session's member of the tenant, and its role there. */
  member_id: string;
  role: Role;
}

/** What every signed-in page gets from the shell. */
export interface Session {
  account: Account;
  /** Reads the account again (after a verification, an approved upgrade, ...). */
  refreshAccount: () => Promise<void>;
  /** A secret to show once (signup's first key), consumed by the dashboard. */
  firstKey: string | null;
  clearFirstKey: () => void;
  /**
   * Whether the session's role may call a route ("POST /customer/keys"), by the table the server
   * checks (src/accounts/roles.ts): pages show no button that would only be refused.
   */
  can: (route: string) => boolean;
}

export function roleCan(role: Role, route: string): boolean {
  const space = route.indexOf(" ");
  return roleAtLeast(role, requiredRole(route.slice(0, space), route.slice(space + 1)));
}
