// What the Approvals pages share: the shapes of /customer/approvals (the server's own types, for
// their types only), the tenant's keys by id, a live countdown and the status badge.
import { useEffect, useState } from "preact/hooks";
import type { ApprovalView } from "../../approvals/approvals.ts";
import type { ProtectInput } from "../../decide/policy.ts";
import type { ReceiptView } from "../../receipts/store.ts";
import { api } from "./api.ts";
import { timeLeft } from "./approval-text.ts";
import { useLoad } from "./ui.tsx";

/** An approval as GET /customer/approvals lists it. */
export type Approval = Omit<ApprovalView, "tenant_id">;

/** GET /customer/approvals/{id}: the approval with the exact input, the policy and every receipt of it. */
export type ApprovalDetail = Approval & {
  input: ProtectInput;
  policy: { policy_id: string; version: number | null; hash: string };
  reason: string;
  receipts: ReceiptView[];
};

export type { ProtectInput };

export const STATUSES = ["pending", "approved", "denied", "expired", "cancelled", "executed"] as const;

export interface KeyName {
  label: string;
  created_by: string | null;
}

/** The tenant's keys by id (the newest 100: a key beyond them shows as its id). */
export function useKeyNames(): (keyId: string) => KeyName | undefined {
  const keys = useLoad(() => api<{ keys: ({ key_id: string } & KeyName)[] }>("GET", "/customer/keys?limit=100"));
  const byId = new Map((keys.data?.keys ?? []).map((k) => [k.key_id, k]));
  return (id) => byId.get(id);
}

/** The clock, read again every second while mounted. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/**
 * Time left before `until`, counting down each second. Not a live region: a screen reader hears
 * it when it reads the row, not every second.
 */
export function Countdown({ until, over = "time is up" }: { until: string; over?: string }) {
  const now = useNow();
  const left = timeLeft(Date.parse(until), now);
  return (
    <time dateTime={until} class={`countdown${left ? "" : " over"}`} data-testid="countdown" title={until}>
      {left ? `${left} left` : over}
    </time>
  );
}

export function StatusBadge({ status }: { status: Approval["status"] }) {
  return (
    <span class={`badge ${status}`} data-testid="approval-status">
      {status}
    </span>
  );
}
