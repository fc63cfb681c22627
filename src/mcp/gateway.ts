// `warden mcp gateway` (docs/mcp.md): an MCP server on stdio towards the agent and an MCP client
// towards the upstream server (a command over stdio, or a Streamable HTTP URL), both the official
// SDK's transports. Messages are relayed as they are, except `tools/call`: each is decided by
// warden first (POST /v1/protect with action `mcp.<server>.<tool>`, then POST /v1/execute of an
// ALLOWED receipt) and only then forwarded; its result names the receipt. A call of a tool the
// upstream's tools/list lacks is answered "unknown tool", warden not asked. With --hide-denied,
// `tools/list` answers lose the tools that no arguments could get through.
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import { argumentsTooLarge, callContext, serverPart, toolAction } from "./context.ts";
import { stdioAgent } from "./stdio.ts";
import { describeRefusal, type Warden, type WardenReply } from "./warden.ts";

export interface GatewayOptions {
  /** The server part of actions; else the upstream's advertised name. */
  name?: string;
  /** Await a pending approval instead of answering with its id. */
  wait: boolean;
  /** Forward every call whatever warden says (or whether it answers); log what it would have done. */
  shadow: boolean;
  /** Drop from tools/list the tools that the policy denies whatever their arguments. */
  hideDenied: boolean;
  /** The upstream: a command and its arguments, or a Streamable HTTP URL. */
  command?: string[];
  upstream?: string;
  warden: Warden;
  log: Logger;
  /** Towards the agent; stdio unless a test gives another. */
  agent?: Transport;
}

type Id = string | number;

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
const HIDE_CONCURRENCY = 4;
/** How long the gateway waits for the upstream to answer a request of its own (tools/list). */
const UPSTREAM_ASK_MS = 15_000;
/** Pages of tools/list read at most; past them the list counts as unknown. */
const TOOL_PAGES_MAX = 100;

/**
 * The environment of an upstream command: the gateway's own, without warden's variables, so the
 * API key stays with the gateway (a server's own credentials, e.g. GITHUB_TOKEN, still reach it).
 */
export function upstreamEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !k.startsWith("WARDEN_")) out[k] = v;
  return out;
}

export async function runGateway(opts: GatewayOptions): Promise<number> {
  const { warden, log } = opts;
  const agent: Transport = opts.agent ?? stdioAgent();
  let http: StreamableHTTPClientTransport | undefined;
  let upstream: Transport;
  if (opts.upstream) {
    // No requestInit headers: nothing of the agent's or the gateway's credentials goes upstream.
    http = new StreamableHTTPClientTransport(new URL(opts.upstream));
    upstream = http;
  } else {
    const [command, ...args] = opts.command!;
    upstream = new StdioClientTransport({ command, args, env: upstreamEnv(process.env), stderr: "inherit" });
  }

  let server = opts.name !== undefined ? serverPart(opts.name) : undefined;
  const initializing = new Set<Id>();
  const listing = new Set<Id>();
  /** Calls forwarded upstream, whose result gets the record. */
  const forwarded = new Map<Id, CallRecord>();
  /** Calls still being decided; a cancellation from the agent ends them without an answer. */
  const deciding = new Set<Id>();
  /** Approvals opened by calls without --wait, by action and arguments: the same call again uses them. */
  const approvals = new Map<string, { approval_id: string; receipt_id: string; reasons: string[] }>();
  /** The gateway's own requests to the upstream, by id: their answers stay with the gateway. */
  const asked = new Map<Id, (message: JSONRPCMessage | undefined) => void>();
  const askPrefix = `warden-gateway-${crypto.randomUUID()}-`;
  let askCount = 0;
  /** The upstream's tool names (every page of its tools/list); undefined when it would not tell. Dropped on tools/list_changed. */
  let upstreamTools: Promise<Set<string> | undefined> | undefined;

  const toAgent = (message: JSONRPCMessage) => agent.send(message).catch((err: Error) => log.error("mcp_agent_send_failed", { error: err.message }));
  const toUpstream = (message: JSONRPCMessage) =>
    upstream.send(message).catch((err: Error) => {
      log.error("mcp_upstream_send_failed", { error: err.message });
      // A request the upstream never got still deserves an answer.
      if (isJSONRPCRequest(message)) void toAgent({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: `upstream unreachable: ${err.message}` } });
    });

  const refuse = (id: Id, text: string, record: CallRecord) => {
    if (!deciding.delete(id)) return; // cancelled by the agent meanwhile: it wants no answer
    log.info("mcp_call_refused", { ...record });
    return toAgent({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }], isError: true, _meta: { warden: record } } });
  };

  const forward = (request: JSONRPCRequest, record: CallRecord) => {
    if (!deciding.delete(request.id)) return; // cancelled by the agent meanwhile
    forwarded.set(request.id, record);
    log.info("mcp_call_forwarded", { ...record });
    return toUpstream(request);
  };

  /** ALLOWED (by the policy or by people): execute the receipt, then forward. */
  const executeAndForward = async (request: JSONRPCRequest, record: CallRecord, receiptId: string) => {
    const executed = await warden.call("POST", "/v1/execute", { receipt_id: receiptId });
    if (executed.kind !== "ok") {
      const why = executed.kind === "unreachable" ? `warden is unreachable (${executed.message})` : `warden refused the execute: ${describeRefusal(executed)}`;
      if (opts.shadow) return forward(request, { ...record, shadow: true, error: why });
      const allowedBy = record.outcome_receipt_id ? `by approval ${record.approval_id}, outcome receipt ${record.outcome_receipt_id}` : `receipt ${record.receipt_id}`;
      return refuse(request.id, `Refused by warden: ${record.action} was allowed (${allowedBy}) but ${why}; the call was not forwarded.`, { ...record, error: why });
    }
    return forward(request, { ...record, execute_receipt_id: executed.body.receipt_id });
  };

  /** Waits for an approval to leave `pending`: the approval, or a reason it could not be read. */
  const awaitApproval = async (request: JSONRPCRequest, approvalId: string): Promise<WardenReply> => {
    const progressToken = (request.params as { _meta?: { progressToken?: string | number } } | undefined)?._meta?.progressToken;
    for (let round = 1; ; round++) {
      const reply = await warden.call("GET", `/v1/approvals/${encodeURIComponent(approvalId)}?wait=${APPROVAL_WAIT_S}`, undefined, (APPROVAL_WAIT_S + 15) * 1000);
      if (reply.kind !== "ok" || reply.body.status !== "pending" || !deciding.has(request.id)) return reply;
      if (progressToken !== undefined) void toAgent({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, progress: round, message: `waiting for approval ${approvalId}` } });
    }
  };

  /** An approval that left `pending`: approved -> execute its outcome and forward; else refuse. */
  const settle = async (request: JSONRPCRequest, record: CallRecord, approval: Record<string, any>) => {
    const next: CallRecord = { ...record, approval_status: approval.status, outcome_receipt_id: approval.outcome_receipt_id ?? undefined };
    if (approval.status === "approved") return executeAndForward(request, { ...next, decision: "ALLOWED" }, approval.outcome_receipt_id);
    if (opts.shadow) return forward(request, { ...next, shadow: true });
    return refuse(request.id, `Refused by warden: approval ${approval.approval_id} of ${record.action} is ${approval.status}${approval.outcome_receipt_id ? ` (outcome receipt ${approval.outcome_receipt_id})` : ""}; the call was not forwarded.`, next);
  };

  /** A request of the gateway's own to the upstream: its answer, or undefined when none came in time. */
  const askUpstream = (method: string, params: Record<string, unknown>): Promise<JSONRPCMessage | undefined> =>
    new Promise((resolve) => {
      const id = `${askPrefix}${++askCount}`;
      const timer = setTimeout(() => answered(undefined), UPSTREAM_ASK_MS);
      const answered = (message: JSONRPCMessage | undefined) => {
        clearTimeout(timer);
        asked.delete(id);
        resolve(message);
      };
      asked.set(id, answered);
      upstream.send({ jsonrpc: "2.0", id, method, params }).catch(() => answered(undefined));
    });

  const listUpstreamTools = async (): Promise<Set<string> | undefined> => {
    const names = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < TOOL_PAGES_MAX; page++) {
      const reply = await askUpstream("tools/list", cursor === undefined ? {} : { cursor });
      if (!reply || !isJSONRPCResultResponse(reply)) return undefined;
      const result = reply.result as { tools?: unknown; nextCursor?: unknown };
      if (!Array.isArray(result.tools)) return undefined;
      for (const tool of result.tools) if (typeof (tool as { name?: unknown })?.name === "string") names.add((tool as { name: string }).name);
      if (typeof result.nextCursor !== "string" || result.nextCursor === "") return names;
      cursor = result.nextCursor;
    }
    return undefined;
  };

  /**
   * Whether the upstream lacks the tool: its tools/list, read again once before saying so (a tool
   * added since). An upstream that does not list its tools has every tool it is asked for.
   */
  const unknownTool = async (tool: string): Promise<string[] | undefined> => {
    upstreamTools ??= listUpstreamTools();
    let names = await upstreamTools;
    if (names === undefined || names.has(tool)) return undefined;
    upstreamTools = listUpstreamTools();
    names = await upstreamTools;
    return names === undefined || names.has(tool) ? undefined : [...names];
  };

  const decideCall = async (request: JSONRPCRequest) => {
    const id = request.id;
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
    const unnamed = (error: string): CallRecord => ({ action: "", arguments_sha256: "", decision: "UNDECIDED", error });
    if (server === undefined) {
      return refuse(id, "Refused by warden: the upstream has not told its name yet (no initialize answer); give the gateway --name.", unnamed("no server name"));
    }
    // A tool the upstream does not have is no decision of the policy's: say so, ask warden nothing.
    if (typeof params.name === "string") {
      const known = await unknownTool(params.name);
      if (known) {
        const shown = known.slice(0, 50).join(", ") + (known.length > 50 ? ", ..." : "");
        const error = "unknown tool";
        const record = { ...unnamed(error), action: `mcp.${server}.${params.name}`.slice(0, 200) };
        // --shadow does not stand in the way: the upstream answers for its own tools.
        if (opts.shadow) return forward(request, { ...record, shadow: true });
        return refuse(id, `Unknown tool: ${JSON.stringify(params.name.slice(0, 200))}. The server has no tool of that name (its tools: ${shown || "none"}); the call was not forwarded.`, record);
      }
    }
    const named = toolAction(server, params.name);
    if ("error" in named) return refuse(id, `Refused by warden: ${named.error}.`, unnamed(named.error));
    const { action } = named;
    const tooLarge = argumentsTooLarge(params.arguments);
    if (tooLarge) return refuse(id, `Refused by warden: ${action}: ${tooLarge}; the call was not forwarded.`, { ...unnamed(tooLarge), action });
    const { context, argumentsSha256 } = await callContext(params.arguments);
    const undecided = (error: string): CallRecord => ({ action, arguments_sha256: argumentsSha256, decision: "UNDECIDED", error });

    // The same call again after it opened an approval: ask that approval, do not open another.
    const remembered = approvals.get(`${action}\n${argumentsSha256}`);
    if (remembered) {
      const seen = await warden.call("GET", `/v1/approvals/${encodeURIComponent(remembered.approval_id)}`);
      if (seen.kind === "ok" && (seen.body.status === "pending" || seen.body.status === "approved")) {
        const record: CallRecord = { action, arguments_sha256: argumentsSha256, decision: "DENIED", reasons: remembered.reasons, receipt_id: remembered.receipt_id, approval_id: remembered.approval_id, approval_status: seen.body.status };
        if (seen.body.status === "approved") {
          approvals.delete(`${action}\n${argumentsSha256}`);
          return settle(request, record, seen.body);
        }
        // --shadow never holds a call: it forwards at once, even with --wait.
        if (!opts.wait || opts.shadow) return pendingRefusal(request, record);
        return waitFor(request, record);
      }
      approvals.delete(`${action}\n${argumentsSha256}`);
    }

    const decided = await warden.call("POST", "/v1/protect", { action, context });
    if (decided.kind !== "ok") {
      const why = decided.kind === "unreachable" ? `warden is unreachable (${decided.message})` : `warden refused to decide: ${describeRefusal(decided)}`;
      if (opts.shadow) return forward(request, { ...undecided(why), shadow: true });
      return refuse(id, `Refused by warden: ${why}; ${action} was not forwarded (the gateway fails closed).`, undecided(why));
    }
    const body = decided.body;
    const record: CallRecord = { action, arguments_sha256: argumentsSha256, decision: body.decision, reasons: body.reasons, receipt_id: body.receipt_id };
    if (body.decision === "ALLOWED") return executeAndForward(request, record, body.receipt_id);
    if (body.approval?.status === "pending") {
      const pending: CallRecord = { ...record, approval_id: body.approval.approval_id, approval_status: "pending" };
      if (!opts.wait || opts.shadow) {
        approvals.set(`${action}\n${argumentsSha256}`, { approval_id: body.approval.approval_id, receipt_id: body.receipt_id, reasons: body.reasons });
        return pendingRefusal(request, pending);
      }
      return waitFor(request, pending);
    }
    if (opts.shadow) return forward(request, { ...record, shadow: true });
    return refuse(id, `Refused by warden: ${action} is DENIED (${(body.reasons ?? []).join(", ")}); receipt ${body.receipt_id}. The call was not forwarded.`, record);
  };

  const pendingRefusal = (request: JSONRPCRequest, record: CallRecord) => {
    if (opts.shadow) return forward(request, { ...record, shadow: true });
    return refuse(
      request.id,
      `Refused by warden for now: ${record.action} needs a person's approval (${(record.reasons ?? []).join(", ")}). Approval ${record.approval_id} is pending (receipt ${record.receipt_id}); make the same call again once it is approved.`,
      record,
    );
  };

  const waitFor = async (request: JSONRPCRequest, record: CallRecord) => {
    log.info("mcp_call_waiting", { ...record });
    const reply = await awaitApproval(request, record.approval_id!);
    if (!deciding.has(request.id)) return; // the agent cancelled
    if (reply.kind !== "ok") {
      const why = reply.kind === "unreachable" ? `warden is unreachable (${reply.message})` : `warden refused: ${describeRefusal(reply)}`;
      if (opts.shadow) return forward(request, { ...record, shadow: true, error: why });
      return refuse(request.id, `Refused by warden: waiting for approval ${record.approval_id} failed: ${why}; the call was not forwarded.`, { ...record, error: why });
    }
    return settle(request, record, reply.body);
  };

  /**
   * --hide-denied: keep a tool unless no arguments could let a call of it through. Warden answers
   * that for the action (`action_allowable` of POST /v1/simulate: some rule could allow it or ask
   * for approval), so a tool allowed only for some arguments (small payments) stays listed.
   */
  const hideDenied = async (tools: unknown[]): Promise<unknown[]> => {
    if (server === undefined) return tools;
    const keep: boolean[] = new Array(tools.length).fill(true);
    let next = 0;
    const worker = async () => {
      while (next < tools.length) {
        const i = next++;
        const named = toolAction(server!, (tools[i] as { name?: unknown })?.name);
        if ("error" in named) {
          keep[i] = false; // never callable through the gateway
          continue;
        }
        const simulated = await warden.call("POST", "/v1/simulate", { input: { action: named.action } });
        // Hiding is a courtesy, not the enforcement: when warden does not answer, the tool stays and its calls are refused.
        if (simulated.kind === "ok") keep[i] = simulated.body.action_allowable !== false;
        // A key limited to other actions may never ask about this one.
        else if (simulated.kind === "refused" && simulated.body.error === "action_not_allowed") keep[i] = false;
      }
    };
    await Promise.all(Array.from({ length: Math.min(HIDE_CONCURRENCY, tools.length) }, worker));
    return tools.filter((_, i) => keep[i]);
  };

  agent.onmessage = (message) => {
    if (isJSONRPCRequest(message)) {
      if (message.method === "initialize") initializing.add(message.id);
      if (message.method === "tools/list" && opts.hideDenied) listing.add(message.id);
      if (message.method === "tools/call") {
        deciding.add(message.id);
        decideCall(message).catch((err: Error) => {
          log.error("mcp_call_failed", { error: err.message });
          if (deciding.has(message.id)) void refuse(message.id, `Refused by warden: the gateway failed to decide (${err.message}).`, { action: "", arguments_sha256: "", decision: "UNDECIDED", error: err.message });
        });
        return;
      }
    }
    if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const requestId = (message.params as { requestId?: Id } | undefined)?.requestId;
      // Still being decided: nothing went upstream, and the agent wants no answer.
      if (requestId !== undefined && deciding.delete(requestId)) return;
    }
    void toUpstream(message);
  };

  upstream.onmessage = (message) => {
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined && asked.has(message.id)) {
      asked.get(message.id)!(message);
      return;
    }
    if (isJSONRPCNotification(message) && message.method === "notifications/tools/list_changed") upstreamTools = undefined;
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined) {
      const id = message.id;
      if (initializing.delete(id) && isJSONRPCResultResponse(message)) {
        const result = message.result as { serverInfo?: { name?: string }; protocolVersion?: string };
        if (server === undefined) server = serverPart(result.serverInfo?.name);
        if (http && typeof result.protocolVersion === "string") http.setProtocolVersion(result.protocolVersion);
        log.info("mcp_upstream_initialized", { server, upstream_name: result.serverInfo?.name });
      }
      if (listing.delete(id) && isJSONRPCResultResponse(message) && Array.isArray((message.result as { tools?: unknown }).tools)) {
        const result = message.result as { tools: unknown[] };
        void hideDenied(result.tools).then(
          (tools) => toAgent({ ...message, result: { ...result, tools } }),
          (err: Error) => {
            log.warn("mcp_hide_denied_failed", { error: err.message });
            return toAgent(message);
          },
        );
        return;
      }
      const record = forwarded.get(id);
      if (record) {
        forwarded.delete(id);
        if (isJSONRPCResultResponse(message)) {
          const result = message.result as { content?: unknown[]; _meta?: Record<string, unknown> };
          const note = { type: "text", text: receiptNote(record) };
          void toAgent({ ...message, result: { ...result, content: [...(Array.isArray(result.content) ? result.content : []), note], _meta: { ...result._meta, warden: record } } });
          return;
        }
      }
    }
    void toAgent(message);
  };

  const closed = new Promise<number>((resolve) => {
    let done = false;
    const end = (code: number) => {
      if (done) return;
      done = true;
      void Promise.allSettled([agent.close(), upstream.close()]).then(() => resolve(code));
    };
    agent.onclose = () => end(0);
    upstream.onclose = () => {
      log.info("mcp_upstream_closed", {});
      end(0);
    };
    upstream.onerror = (err) => log.warn("mcp_upstream_error", { error: err.message });
    agent.onerror = (err) => log.warn("mcp_agent_error", { error: err.message });
  });

  await upstream.start();
  await agent.start();
  log.info("mcp_gateway_started", { upstream: opts.upstream ?? opts.command!.join(" "), warden: warden.url, server, wait: opts.wait, shadow: opts.shadow, hide_denied: opts.hideDenied });
  return closed;
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
