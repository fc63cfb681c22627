// /v1/approvals/{id} (the agent's key: read, wait, cancel) and /customer/approvals (people: the
// inbox, one approval with its exact input and receipts, votes, the offline-checkable bundle).
// docs/api.md, "Approvals".
import { Elysia } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/index.ts";
import type { KeyAuthenticator } from "../keys/authenticate.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import type { TenantTurns } from "../receipts/turns.ts";
import type { Approvals } from "./approvals.ts";
import type { ApprovalWaiters } from "./waiters.ts";
import { sessionGuard, apiKeyGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { requestId } from "../http/request-state.ts";
import { receiptProof, signedCheckpoint } from "../receipts/checkpoint.ts";
import { logLeaf, toReceipt, type ReceiptRow } from "../receipts/store.ts";
import type { ResultPayload } from "../decide/payload.ts";
import { ApprovalDetail, ApprovalList, ApprovalParams, ApprovalResponse, Bundle, ListQuery, VoteBody, WaitQuery } from "./model.ts";
import type { ApprovalView } from "./approvals.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface ApprovalsDeps {
  approvalWaiters: ApprovalWaiters;
  approvals: Approvals;
  config: Config;
  db: Db;
  keys: KeyAuthenticator;
  logReads: TenantTurns;
  now: () => Date;
  sessions: Sessions;
  signer: ReceiptSigner;
}

const keySecurity = [{ apiKey: [] as string[] }];
const security = [{ bearer: [] as string[] }];
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse };

/** An approval as its routes show it: everything but the tenant. */
const view = (a: ApprovalView) => {
  const { tenant_id: _tenant, ...rest } = a;
  return rest;
};
const shown = (a: ApprovalView) => ({ ok: true as const, ...view(a) });

// A page cursor: the last approval's creation time and id, opaque to clients.
const encode = (a: ApprovalView) => Buffer.from(`${a.created_at}|${a.approval_id}`, "utf8").toString("base64url");
function decode(cursor: string): [string, string] | undefined {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  return at && id && !Number.isNaN(Date.parse(at)) && /^apv_[0-9A-Za-z]{22}$/.test(id) ? [at, id] : undefined;
}

export function approvalsRoutes(deps: ApprovalsDeps) {
  return new Elysia({ name: "approvals-all" }).use(agentRoutes(deps)).use(peopleRoutes(deps));
}

/** What the agent's key may do: read (and wait for) its tenant's approvals, and withdraw one. */
function agentRoutes(deps: ApprovalsDeps) {
  return (
    new Elysia({ name: "approvals-agent", prefix: "/v1/approvals" })
      // The guard runs before Elysia validates the body: without a key the answer is 401, never 400 (src/http/guards.ts).
      .use(apiKeyGuard(deps.keys))
      .guard({ apiKey: true })
      .get(
        "/:approval_id",
        async ({ principal, params, query, request }) => {
          const tenant = principal.tenant_id;
          let approval = await deps.approvals.get(tenant, params.approval_id);
          const wait = Math.min(30, Math.max(0, query.wait ?? 0));
          // Wait while its status stays pending: a commit that touches it wakes us (no polling per
          // waiter); a wake that left it pending (a vote short of the quorum) waits out the rest.
          const deadline = Date.now() + wait * 1000;
          while (approval.status === "pending" && Date.now() < deadline && !request.signal.aborted) {
            const changed = await deps.approvalWaiters.until(tenant, approval.approval_id, deadline - Date.now(), request.signal);
            // A wait that ended unwoken reads it again only if its expiry passed meanwhile.
            if (changed || Date.now() >= Date.parse(approval.expires_at)) approval = await deps.approvals.get(tenant, params.approval_id);
            if (!changed) break;
          }
          return shown(approval);
        },
        {
          params: ApprovalParams,
          query: WaitQuery,
          response: { 200: ApprovalResponse, ...errors },
          detail: { summary: "An approval of the key's tenant; ?wait=N (0 to 30 s) answers as soon as its status changes", tags: ["approvals"], security: keySecurity },
        },
      )
      .post(
        "/:approval_id/cancel",
        async ({ principal, params, request }) => shown(await deps.approvals.cancel(principal.tenant_id, params.approval_id, principal.key_id, requestId(request))),
        {
          params: ApprovalParams,
          response: { 200: ApprovalResponse, ...errors },
          detail: {
            summary: "Withdraw a pending approval: cancelled, with its DENIED outcome receipt; only the key that asked (403 forbidden_key), 409 not_pending once decided",
            tags: ["approvals"],
            security: keySecurity,
          },
        },
      )
  );
}

/** What people do: the inbox, one approval in full, votes, the bundle that proves the outcome. */
function peopleRoutes(deps: ApprovalsDeps) {
  return (
    new Elysia({ name: "approvals-people", prefix: "/customer/approvals" })
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .get(
        "",
        async ({ customer, query }) => {
          const limit = query.limit ?? 50;
          const after = query.cursor === undefined ? undefined : decode(query.cursor);
          if (query.cursor !== undefined && !after) throw new AppError("invalid_request", "query/cursor: not a cursor this service gave out.");
          const rows = await deps.db.query("approvals/list", [customer.tenant_id, query.status ?? null, after?.[0] ?? null, after?.[1] ?? null, limit + 1]);
          const page = await Promise.all(rows.slice(0, limit).map((r) => deps.approvals.view(r)));
          return { ok: true as const, approvals: page.map(view), next_cursor: rows.length > limit ? encode(page[page.length - 1]) : null };
        },
        {
          query: ListQuery,
          response: { 200: ApprovalList, ...errors },
          detail: { summary: "The tenant's approvals, newest first (?status=pending for the inbox)", tags: ["approvals"], security },
        },
      )
      .get(
        "/:approval_id",
        async ({ customer, params }) => {
          const approval = await deps.approvals.get(customer.tenant_id, params.approval_id);
          const rows = (await deps.db.query("approvals/receipts", [customer.tenant_id, approval.approval_id])) as ReceiptRow[];
          const receipts = rows.map(toReceipt);
          const protect = receipts.find((r) => r.receipt_id === approval.protect_receipt_id)!.payload as ResultPayload;
          return { ...shown(approval), input: protect.input, policy: protect.policy, reason: protect.reasons[0], receipts };
        },
        {
          params: ApprovalParams,
          response: { 200: ApprovalDetail, ...errors },
          detail: { summary: "One approval: the exact input from the signed protect receipt, the key, the rule and terms, every receipt of it", tags: ["approvals"], security },
        },
      )
      .post(
        "/:approval_id/votes",
        async ({ customer, params, body, request }) => {
          const voter = { tenant_id: customer.tenant_id, member_id: customer.member_id, account_id: customer.account_id, role: customer.role, mfa_active: customer.mfa_active, request_id: requestId(request) };
          return shown(await deps.approvals.vote(voter, params.approval_id, body.vote, body.action_hash, body.comment));
        },
        {
          params: ApprovalParams,
          body: VoteBody,
          parse: "json",
          response: { 200: ApprovalResponse, ...errors },
          detail: { summary: "Vote approve or deny on the action shown (its action_hash); a quorum of approvals, or one deny, decides", tags: ["approvals"], security },
        },
      )
      .post(
        "/:approval_id/cancel",
        async ({ customer, params, request }) => shown(await deps.approvals.cancel(customer.tenant_id, params.approval_id, customer.member_id, requestId(request))),
        {
          params: ApprovalParams,
          response: { 200: ApprovalResponse, ...errors },
          detail: { summary: "Cancel a pending approval (owner or admin): cancelled, with its DENIED outcome receipt naming who cancelled (409 not_pending once decided)", tags: ["approvals"], security },
        },
      )
      .get(
        "/:approval_id/bundle",
        async ({ customer, params }) => {
          const approval = await deps.approvals.get(customer.tenant_id, params.approval_id);
          return deps.logReads.run(customer.tenant_id, async () => {
            const rows = (await deps.db.query("approvals/receipts", [customer.tenant_id, approval.approval_id])) as ReceiptRow[];
            const checkpoint = await signedCheckpoint(deps, customer.tenant_id);
            const proofs = [];
            for (const row of rows) {
              const leaf = (await logLeaf(deps.db, customer.tenant_id, row.receipt_id))!;
              proofs.push(await receiptProof(deps.db, customer.tenant_id, leaf, checkpoint.tree_size));
            }
            return { ok: true as const, receipts: rows.map(toReceipt), proofs, checkpoint };
          });
        },
        {
          params: ApprovalParams,
          response: { 200: Bundle, ...errors },
          detail: {
            summary: "Every receipt of the approval with its inclusion proof and a checkpoint: `warden verify --proof` checks offline that a quorum of distinct eligible members approved this exact action under the terms",
            tags: ["approvals"],
            security,
          },
        },
      )
  );
}
