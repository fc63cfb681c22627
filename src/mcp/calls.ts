// The gateway's `tools/call`s (docs/mcp.md): each is decided by warden first (POST /v1/protect with
// action `mcp.<server>.<tool>`, then POST /v1/execute of an ALLOWED receipt) and only then
// forwarded, or refused with a result that says why; a call that opened an approval waits for it
// (--wait) or is refused until the same call comes again once it is approved. --shadow forwards
// every call and only records what warden said. A call of a tool the upstream lacks is answered
// "unknown tool", warden not asked.
import { isJSONRPCResultResponse, type JSONRPCMessage, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import { argumentsTooLarge, callContext, toolAction } from "./context.ts";
import type { Id, Upstream } from "./upstream.ts";
import { describeRefusal, type Warden, type WardenReply } from "./warden.ts";

/** What the result of a decided call carries in `_meta.warden` (docs/mcp.md, "Results"). */
export interface CallRecord {
  action: string;
  arguments_sha256: string;
  decision: "ALLOWED" | "DENIED" | "UNDECIDED";
  reasons?: string[];
  /** The protect receipt (the decision). */
  receipt_id?: string;
  /** The execute receipt written before forwarding. */
  execute_receipt_id?: string;
  approval_id?: string;
  approval_status?: string;
  outcome_receipt_id?: string;
  /** --shadow: forwarded whatever the decision. */
  shadow?: boolean;
  error?: string;
}

/** Waits longer than the service's longest ?wait= (30 s) before calling it out of reach. */
const APPROVAL_WAIT_S = 30;

export interface CallsOptions {
  warden: Warden;
  log: Logger;
  /** Await a pending approval instead of answering with its id. */
  wait: boolean;
  /** Forward every call whatever warden says (or whether it answers). */
  shadow: boolean;
  upstream: Upstream;
  /** The server part of actions, once known (--name, or the upstream's initialize answer). */
  server: () => string | undefined;
  toAgent: (message: JSONRPCMessage) => Promise<void>;
  toUpstream: (message: JSONRPCMessage) => Promise<void>;
}

export class Calls {
  /** Calls still being decided; a cancellation from the agent ends them without an answer. */
  private readonly deciding = new Set<Id>();
  /** Calls forwarded upstream, whose result gets the record. */
  private readonly forwarded = new Map<Id, CallRecord>();
  /** Approvals opened by calls without --wait, by action and arguments: the same call again uses them. */
  private readonly approvals = new Map<string, { approval_id: string; receipt_id: string; reasons: string[] }>();

  constructor(private readonly o: CallsOptions) {}

  /** A tools/call from the agent: decided, then forwarded or refused. */
  begin(request: JSONRPCRequest): void {
    this.deciding.add(request.id);
    this.decide(request).catch((err: Error) => {
      this.o.log.error("mcp_call_failed", { error: err.message });
      if (this.deciding.has(request.id)) void this.refuse(request.id, `Refused by warden: the gateway failed to decide (${err.message}).`, { action: "", arguments_sha256: "", decision: "UNDECIDED", error: err.message });
    });
  }

  /** The agent cancelled `id`: true when it was still being decided (nothing went upstream, no answer is due). */
  cancel(id: Id): boolean {
    return this.deciding.delete(id);
  }

  /** The upstream's answer to a forwarded call, with the call's receipts added; else the answer as it is. */
  answered(message: JSONRPCMessage & { id: Id }): JSONRPCMessage {
    const record = this.forwarded.get(message.id);
    if (!record) return message;
    this.forwarded.delete(message.id);
    if (!isJSONRPCResultResponse(message)) return message;
    const result = message.result as { content?: unknown[]; _meta?: Record<string, unknown> };
    const note = { type: "text", text: receiptNote(record) };
    return { ...message, result: { ...result, content: [...(Array.isArray(result.content) ? result.content : []), note], _meta: { ...result._meta, warden: record } } };
  }

  private async decide(request: JSONRPCRequest) {
    const { warden, shadow } = this.o;
    const server = this.o.server();
    const id = request.id;
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
    const unnamed = (error: string): CallRecord => ({ action: "", arguments_sha256: "", decision: "UNDECIDED", error });
    if (server === undefined) {
      return this.refuse(id, "Refused by warden: the upstream has not told its name yet (no initialize answer); give the gateway --name.", unnamed("no server name"));
    }
    // A tool the upstream does not have is no decision of the policy's: say so, ask warden nothing.
    if (typeof params.name === "string") {
      const known = await this.o.upstream.unknownTool(params.name);
      if (known) {
        const shown = known.slice(0, 50).join(", ") + (known.length > 50 ? ", ..." : "");
        const error = "unknown tool";
        const record = { ...unnamed(error), action: `mcp.${server}.${params.name}`.slice(0, 200) };
        // --shadow does not stand in the way: the upstream answers for its own tools.
        if (shadow) return this.forward(request, { ...record, shadow: true });
        return this.refuse(id, `Unknown tool: ${JSON.stringify(params.name.slice(0, 200))}. The server has no tool of that name (its tools: ${shown || "none"}); the call was not forwarded.`, record);
      }
    }
    const named = toolAction(server, params.name);
    if ("error" in named) return this.refuse(id, `Refused by warden: ${named.error}.`, unnamed(named.error));
    const { action } = named;
    const tooLarge = argumentsTooLarge(params.arguments);
    if (tooLarge) return this.refuse(id, `Refused by warden: ${action}: ${tooLarge}; the call was not forwarded.`, { ...unnamed(tooLarge), action });
    const { context, argumentsSha256 } = await callContext(params.arguments);
    const undecided = (error: string): CallRecord => ({ action, arguments_sha256: argumentsSha256, decision: "UNDECIDED", error });
    const key = `${action}\n${argumentsSha256}`;

    // The same call again after it opened an approval: ask that approval, do not open another.
    const remembered = this.approvals.get(key);
    if (remembered) {
      const seen = await warden.call("GET", `/v1/approvals/${encodeURIComponent(remembered.approval_id)}`);
      if (seen.kind === "ok" && (seen.body.status === "pending" || seen.body.status === "approved")) {
        const record: CallRecord = { action, arguments_sha256: argumentsSha256, decision: "DENIED", reasons: remembered.reasons, receipt_id: remembered.receipt_id, approval_id: remembered.approval_id, approval_status: seen.body.status };
        if (seen.body.status === "approved") {
          this.approvals.delete(key);
          return this.settle(request, record, seen.body);
        }
        // --shadow never holds a call: it forwards at once, even with --wait.
        if (!this.o.wait || shadow) return this.pendingRefusal(request, record);
        return this.waitFor(request, record);
      }
      this.approvals.delete(key);
    }

    const decided = await warden.call("POST", "/v1/protect", { action, context });
    if (decided.kind !== "ok") {
      const why = decided.kind === "unreachable" ? `warden is unreachable (${decided.message})` : `warden refused to decide: ${describeRefusal(decided)}`;
      if (shadow) return this.forward(request, { ...undecided(why), shadow: true });
      return this.refuse(id, `Refused by warden: ${why}; ${action} was not forwarded (the gateway fails closed).`, undecided(why));
    }
    const body = decided.body;
    const record: CallRecord = { action, arguments_sha256: argumentsSha256, decision: body.decision, reasons: body.reasons, receipt_id: body.receipt_id };
    if (body.decision === "ALLOWED") return this.executeAndForward(request, record, body.receipt_id);
    if (body.approval?.status === "pending") {
      const pending: CallRecord = { ...record, approval_id: body.approval.approval_id, approval_status: "pending" };
      if (!this.o.wait || shadow) {
        this.approvals.set(key, { approval_id: body.approval.approval_id, receipt_id: body.receipt_id, reasons: body.reasons });
        return this.pendingRefusal(request, pending);
      }
      return this.waitFor(request, pending);
    }
    // A retry the service answered with the approval it already has (one per key and action):
    // approved, its outcome is executed and the call forwarded; denied or expired, refused so.
    if (body.approval && !shadow) return this.settle(request, { ...record, approval_id: body.approval.approval_id, approval_status: body.approval.status }, body.approval);
    if (shadow) return this.forward(request, { ...record, shadow: true });
    return this.refuse(id, `Refused by warden: ${action} is DENIED (${(body.reasons ?? []).join(", ")}); receipt ${body.receipt_id}. The call was not forwarded.`, record);
  }

  private refuse(id: Id, text: string, record: CallRecord) {
    if (!this.deciding.delete(id)) return; // cancelled by the agent meanwhile: it wants no answer
    this.o.log.info("mcp_call_refused", { ...record });
    return this.o.toAgent({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }], isError: true, _meta: { warden: record } } });
  }

  private forward(request: JSONRPCRequest, record: CallRecord) {
    if (!this.deciding.delete(request.id)) return; // cancelled by the agent meanwhile
    this.forwarded.set(request.id, record);
    this.o.log.info("mcp_call_forwarded", { ...record });
    return this.o.toUpstream(request);
  }

  /** ALLOWED (by the policy or by people): execute the receipt, then forward. */
  private async executeAndForward(request: JSONRPCRequest, record: CallRecord, receiptId: string) {
    const executed = await this.o.warden.call("POST", "/v1/execute", { receipt_id: receiptId });
    if (executed.kind !== "ok") {
      const why = executed.kind === "unreachable" ? `warden is unreachable (${executed.message})` : `warden refused the execute: ${describeRefusal(executed)}`;
      if (this.o.shadow) return this.forward(request, { ...record, shadow: true, error: why });
      const allowedBy = record.outcome_receipt_id ? `by approval ${record.approval_id}, outcome receipt ${record.outcome_receipt_id}` : `receipt ${record.receipt_id}`;
      return this.refuse(request.id, `Refused by warden: ${record.action} was allowed (${allowedBy}) but ${why}; the call was not forwarded.`, { ...record, error: why });
    }
    return this.forward(request, { ...record, execute_receipt_id: executed.body.receipt_id });
  }

  private pendingRefusal(request: JSONRPCRequest, record: CallRecord) {
    if (this.o.shadow) return this.forward(request, { ...record, shadow: true });
    return this.refuse(
      request.id,
      `Refused by warden for now: ${record.action} needs a person's approval (${(record.reasons ?? []).join(", ")}). Approval ${record.approval_id} is pending (receipt ${record.receipt_id}); make the same call again once it is approved.`,
      record,
    );
  }

  private async waitFor(request: JSONRPCRequest, record: CallRecord) {
    this.o.log.info("mcp_call_waiting", { ...record });
    const reply = await this.awaitApproval(request, record.approval_id!);
    if (!this.deciding.has(request.id)) return; // the agent cancelled
    if (reply.kind !== "ok") {
      const why = reply.kind === "unreachable" ? `warden is unreachable (${reply.message})` : `warden refused: ${describeRefusal(reply)}`;
      if (this.o.shadow) return this.forward(request, { ...record, shadow: true, error: why });
      return this.refuse(request.id, `Refused by warden: waiting for approval ${record.approval_id} failed: ${why}; the call was not forwarded.`, { ...record, error: why });
    }
    return this.settle(request, record, reply.body);
  }

  /** Waits for an approval to leave `pending`: the approval, or a reason it could not be read. */
  private async awaitApproval(request: JSONRPCRequest, approvalId: string): Promise<WardenReply> {
    const progressToken = (request.params as { _meta?: { progressToken?: string | number } } | undefined)?._meta?.progressToken;
    for (let round = 1; ; round++) {
      const reply = await this.o.warden.call("GET", `/v1/approvals/${encodeURIComponent(approvalId)}?wait=${APPROVAL_WAIT_S}`, undefined, (APPROVAL_WAIT_S + 15) * 1000);
      if (reply.kind !== "ok" || reply.body.status !== "pending" || !this.deciding.has(request.id)) return reply;
      if (progressToken !== undefined) void this.o.toAgent({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, progress: round, message: `waiting for approval ${approvalId}` } });
    }
  }

  /** An approval that left `pending`: approved -> execute its outcome and forward; else refuse. */
  private settle(request: JSONRPCRequest, record: CallRecord, approval: Record<string, any>) {
    const next: CallRecord = { ...record, approval_status: approval.status, outcome_receipt_id: approval.outcome_receipt_id ?? undefined };
    if (approval.status === "approved") return this.executeAndForward(request, { ...next, decision: "ALLOWED" }, approval.outcome_receipt_id);
    if (this.o.shadow) return this.forward(request, { ...next, shadow: true });
    return this.refuse(request.id, `Refused by warden: approval ${approval.approval_id} of ${record.action} is ${approval.status}${approval.outcome_receipt_id ? ` (outcome receipt ${approval.outcome_receipt_id})` : ""}; the call was not forwarded.`, next);
  }
}

/** The text appended to a forwarded call's result, so the agent (and its model) sees the receipt. */
export function receiptNote(record: CallRecord): string {
  const parts = [`warden: ${record.action} ${record.decision}`];
  if (record.approval_id && record.outcome_receipt_id) {
    // People decided: the outcome receipt holds the decision; the protect receipt (DENIED) only asked them.
    parts[0] += ` by approval ${record.approval_id} (${record.approval_status})`;
    parts.push(`outcome receipt ${record.outcome_receipt_id}`);
    if (record.receipt_id) parts.push(`the protect receipt ${record.receipt_id} was DENIED pending approval`);
  } else {
    if (record.receipt_id) parts.push(`receipt ${record.receipt_id}`);
    if (record.approval_id) parts.push(`approval ${record.approval_id} ${record.approval_status ?? "pending"}`);
  }
  if (record.execute_receipt_id) parts.push(`executed as ${record.execute_receipt_id}`);
  if (record.shadow) parts.push("shadow mode: forwarded whatever the decision");
  if (record.error) parts.push(record.error);
  return parts.join("; ");
}
