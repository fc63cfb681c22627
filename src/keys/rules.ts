// What one key may do beyond its tenant's plan and policy (docs/api.md, "Keys for agents"):
// expiry, suspension, the actions it may ask about, its own limits, the addresses it may come
// from, and a rotation's overlap. Parsed once when a key's context is read, so that a request
// with a key that has none of them pays one null check (src/keys/authenticate.ts).
import type { Queryable, QueryRow } from "../db/index.ts";
import { AppError } from "../http/errors.ts";
import { parseCidr, type Cidr } from "./cidr.ts";

export interface KeyRules {
  /** Epoch milliseconds from which the key is refused (key_expired); null: never. */
  expiresMs: number | null;
  enabled: boolean;
  /** The actions the key may ask about: exact names, and the prefixes of patterns ending in `*`. */
  actions: { exact: ReadonlySet<string>; prefixes: readonly string[] } | null;
  protectPerDay: number | null;
  rate: { perSecond: number; burst: number } | null;
  allowedIps: Cidr[] | null;
  /** A key rotated with an overlap: accepted until then (epoch milliseconds). */
  overlapMs: number | null;
}

type ContextRow = Pick<
  QueryRow<"keys/authenticate">,
  "expires_ms" | "enabled" | "actions" | "protect_per_day" | "per_second" | "burst" | "allowed_ips" | "overlap_ms"
>;

/** The key's rules, or null when it has none (the common case). */
export function keyRulesOf(row: ContextRow): KeyRules | null {
  if (row.expires_ms === null && row.enabled && row.actions === null && row.protect_per_day === null && row.per_second === null
    && row.allowed_ips === null && row.overlap_ms === null) return null;
  return {
    expiresMs: row.expires_ms,
    enabled: row.enabled,
    actions: row.actions === null ? null : {
      exact: new Set(row.actions.filter((a) => !a.endsWith("*"))),
      prefixes: row.actions.filter((a) => a.endsWith("*")).map((a) => a.slice(0, -1)),
    },
    protectPerDay: row.protect_per_day,
    // burst defaults to one second's worth.
    rate: row.per_second === null ? null : { perSecond: row.per_second, burst: row.burst ?? row.per_second },
    // The database stores only valid blocks (cidr[]); one it spells unexpectedly is skipped, never widened.
    allowedIps: row.allowed_ips === null ? null : row.allowed_ips.map(parseCidr).filter((c): c is Cidr => c !== undefined),
    overlapMs: row.overlap_ms,
  };
}

/** Whether the key may ask about this action (the policy language's action patterns). */
export function actionAllowed(rules: KeyRules, action: string): boolean {
  if (rules.actions === null || rules.actions.exact.has(action)) return true;
  for (const prefix of rules.actions.prefixes) if (action.startsWith(prefix)) return true;
  return false;
}

/** Refuses an action outside the key's list: 403 action_not_allowed, before anything is stored. */
export function assertActionAllowed(rules: KeyRules | null, action: string): void {
  if (rules !== null && !actionAllowed(rules, action)) {
    throw new AppError("action_not_allowed", `This API key may not ask about the action "${action}" (its actions list).`);
  }
}

/**
 * A protect with this key: its action, then its daily limit (counted in the database, shared by
 * every instance; 429 quota_exceeded, limit key_protect_per_day).
 */
export async function admitProtect(db: Queryable, tenantId: string, keyId: string, rules: KeyRules | null, action: string): Promise<void> {
  if (rules === null) return;
  assertActionAllowed(rules, action);
  if (rules.protectPerDay === null) return;
  const taken = (await db.one("keys/protect_take", [tenantId, keyId, rules.protectPerDay]))!;
  if (!taken.allowed) {
    throw new AppError("quota_exceeded", "This API key's daily protect limit (limits.protect_per_day) is used up; it resets at 00:00 UTC.", {
      fields: { limit: "key_protect_per_day" },
    });
  }
}
