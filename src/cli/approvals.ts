// `warden approvals list|show|approve|deny` (README, Command line; docs/api.md, "Approvals"): the
// inbox of requests a require_approval rule holds, one of them in full, and a vote, with
// WARDEN_URL and WARDEN_TOKEN (a session of a member whose role the rule's terms name). A vote
// first reads the approval, checks that its protect receipt hashes to the action hash, and sends
// that hash: what was approved or denied is printed with the approval's state after the vote.
import { parseArgs } from "node:util";
import { contentHash } from "../crypto/canonical.ts";
import { callService } from "./client.ts";
import { CliError } from "./inputs.ts";
import type { UsageLine } from "./usage.ts";

export const APPROVALS_LINES: UsageLine[] = [
  { synopsis: "approvals list [--status S] [--limit N] [--cursor C]", summary: "the tenant's approvals, newest first; --status pending is the inbox" },
  { synopsis: "approvals show ID", summary: "one approval: the exact input, the key, the rule and terms, votes, receipts" },
  { synopsis: "approvals approve ID [--comment C]", summary: "vote approve on the action shown (its action_hash); prints what was approved" },
  { synopsis: "approvals deny ID [--comment C]", summary: "vote deny (one deny denies); prints what was denied" },
];

/** Bad usage of `warden approvals`: exit 2 with its usage. */
export class ApprovalsUsageError extends Error {}

const STATUSES = ["pending", "approved", "denied", "expired", "cancelled", "executed"];
const APPROVAL_ID = /^apv_[0-9A-Za-z]{1,100}$/;

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

function approvalId(sub: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new ApprovalsUsageError(`approvals ${sub} needs one approval id (apv_...)`);
  if (!APPROVAL_ID.test(positionals[0])) throw new ApprovalsUsageError(`approvals ${sub}: ${positionals[0]} is not an approval id (apv_...)`);
  return positionals[0];
}

export async function runApprovals(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const options = { status: { type: "string" }, limit: { type: "string" }, cursor: { type: "string" }, comment: { type: "string" } } as const;
  const { values, positionals } = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
  const only = (allowed: string[]) => {
    const extra = Object.keys(values).filter((k) => !allowed.includes(k));
    if (extra.length) throw new ApprovalsUsageError(`approvals ${sub} takes no --${extra.join(", --")}`);
  };
  switch (sub) {
    case "list": {
      only(["status", "limit", "cursor"]);
      if (positionals.length) throw new ApprovalsUsageError("approvals list takes no arguments");
      const query = new URLSearchParams();
      if (values.status !== undefined) {
        if (!STATUSES.includes(values.status)) throw new ApprovalsUsageError(`--status is one of ${STATUSES.join(", ")}`);
        query.set("status", values.status);
      }
      if (values.limit !== undefined) {
        const limit = Number(values.limit);
        if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100)) throw new ApprovalsUsageError("--limit is an integer from 1 to 100");
        query.set("limit", String(limit));
      }
      if (values.cursor !== undefined) query.set("cursor", values.cursor);
      const q = query.toString();
      print(await callService("GET", `/customer/approvals${q ? `?${q}` : ""}`, { auth: "token" }));
      return 0;
    }
    case "show": {
      only([]);
      const id = approvalId(sub, positionals);
      print(await callService("GET", `/customer/approvals/${id}`, { auth: "token" }));
      return 0;
    }
    case "approve":
    case "deny": {
      only(["comment"]);
      return vote(approvalId(sub, positionals), sub, values.comment);
    }
    default:
      throw new ApprovalsUsageError(sub === undefined ? "approvals needs a command: list, show, approve or deny" : `unknown approvals command: ${sub}`);
  }
}

type Detail = {
  approval_id: string;
  status: string;
  action_hash: string;
  protect_receipt_id: string;
  input: { action: string; amount?: number; currency?: string; resource?: string };
  rule: string;
  reason: string;
  policy: unknown;
  receipts: { receipt_id: string; content_hash: string; payload: unknown }[];
};

/** A vote on exactly the action the approval shows, once its protect receipt is seen to hash to it. */
async function vote(id: string, choice: "approve" | "deny", comment: string | undefined): Promise<number> {
  const shown = (await callService("GET", `/customer/approvals/${id}`, { auth: "token" })) as unknown as Detail;
  const protect = shown.receipts.find((r) => r.receipt_id === shown.protect_receipt_id);
  if (!protect || protect.content_hash !== shown.action_hash || (await contentHash(protect.payload)) !== shown.action_hash) {
    throw new CliError(`approval ${id}: its protect receipt does not hash to the action_hash the service names; no vote was sent`, 1);
  }
  const body = { vote: choice, action_hash: shown.action_hash, ...(comment ? { comment } : {}) };
  const after = await callService("POST", `/customer/approvals/${id}/votes`, { auth: "token", body });
  const { input } = shown;
  const amount = input.amount === undefined ? "" : ` ${input.amount}${input.currency ? ` ${input.currency}` : ""}`;
  const on = input.resource ? ` on ${input.resource}` : "";
  console.error(`${choice === "approve" ? "approved" : "denied"}: ${input.action}${amount}${on} (action_hash ${shown.action_hash}, rule ${shown.rule}); approval ${id} is now ${after.status}`);
  print({
    ok: true,
    vote: choice,
    voted_on: { approval_id: id, action_hash: shown.action_hash, input, rule: shown.rule, reason: shown.reason, policy: shown.policy },
    approval: after,
  });
  return 0;
}
