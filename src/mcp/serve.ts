// `warden mcp serve` (docs/mcp.md, "warden mcp serve"): an MCP server on stdio whose tools call
// warden's agent routes with WARDEN_API_KEY, for agents that ask before they act on their own.
// Each tool answers the service's JSON (as text and as structuredContent); a refusal of the
// service or an unreachable service is an error result (isError) that says which.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import pkg from "../../package.json" with { type: "json" };
import { stdioAgent } from "./stdio.ts";
import { describeRefusal, type Warden, type WardenReply } from "./warden.ts";

const CONTEXT = {
  type: "object",
  description: "facts policies test: keys ^[A-Za-z0-9_.-]{1,64}$, at most 32, values string (<= 500 characters), number or boolean",
  additionalProperties: { type: ["string", "number", "boolean"] },
};
const INPUT = {
  type: "object",
  properties: {
    action: { type: "string", description: "what the agent is about to do, e.g. payment.send (^[A-Za-z0-9_.:/-]+$, <= 200 characters)" },
    resource: { type: "string", description: "what it acts on (<= 500 characters)" },
    amount: { type: "number", minimum: 0 },
    currency: { type: "string", description: "ISO 4217, e.g. EUR" },
    context: CONTEXT,
  },
  required: ["action"],
  additionalProperties: false,
};
const ID = (prefix: string, what: string) => ({ type: "string", description: what, pattern: `^${prefix}` });

export const SERVE_TOOLS: Tool[] = [
  {
    name: "simulate",
    description: "Dry-run an action against the active policy (nothing stored, nothing counted as a protect). Give input or a preset name.",
    inputSchema: { type: "object", properties: { input: INPUT, preset: { type: "string" }, policy_version: { type: "integer", minimum: 1 } }, additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: "protect",
    description: "Ask before acting: a live decision (ALLOWED or DENIED) stored as a signed receipt. A DENIED answer with `approval` is waiting for people: use approval_status.",
    inputSchema: INPUT as Tool["inputSchema"],
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: "execute",
    description: "Record that an ALLOWED protect receipt (or an approved approval's outcome receipt) is being acted on; once per receipt, within its window.",
    inputSchema: { type: "object", properties: { receipt_id: ID("rcpt_", "the protect receipt_id or the approval's outcome_receipt_id") }, required: ["receipt_id"], additionalProperties: false },
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: "verify",
    description: "Re-check a result (protect, execute, simulation, or a stored receipt): content hash, signature, decision under its policy version, stored unchanged.",
    inputSchema: { type: "object", properties: { receipt: { type: "object", description: "the whole result as warden answered it" } }, required: ["receipt"], additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: "approval_status",
    description: "The status of an approval (pending, approved, denied, expired, cancelled, executed); with wait (1 to 30 seconds) answers as soon as it changes. Approved: execute its outcome_receipt_id.",
    inputSchema: { type: "object", properties: { approval_id: ID("apv_", "the approval_id protect answered"), wait: { type: "integer", minimum: 0, maximum: 30 } }, required: ["approval_id"], additionalProperties: false },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
];

function answer(reply: WardenReply): CallToolResult {
  if (reply.kind === "ok") return { content: [{ type: "text", text: JSON.stringify(reply.body, null, 2) }], structuredContent: reply.body };
  if (reply.kind === "refused") return { content: [{ type: "text", text: `warden refused: ${describeRefusal(reply)}` }], structuredContent: reply.body, isError: true };
  return { content: [{ type: "text", text: `warden is unreachable: ${reply.message}` }], isError: true };
}

const bad = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

/** One tool call: the route it maps to, with the arguments as the service takes them. */
export async function callServeTool(warden: Warden, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  switch (name) {
    case "simulate":
      return answer(await warden.call("POST", "/v1/simulate", args));
    case "protect":
      return answer(await warden.call("POST", "/v1/protect", args));
    case "execute":
      if (typeof args.receipt_id !== "string") return bad("execute needs receipt_id");
      return answer(await warden.call("POST", "/v1/execute", { receipt_id: args.receipt_id }));
    case "verify":
      if (args.receipt === undefined) return bad("verify needs receipt: the whole result");
      return answer(await warden.call("POST", "/v1/verify", { receipt: args.receipt }));
    case "approval_status": {
      if (typeof args.approval_id !== "string") return bad("approval_status needs approval_id");
      const wait = Math.min(30, Math.max(0, Math.trunc(Number(args.wait ?? 0)) || 0));
      return answer(await warden.call("GET", `/v1/approvals/${encodeURIComponent(args.approval_id)}?wait=${wait}`, undefined, (wait + 15) * 1000));
    }
    default:
      return bad(`unknown tool: ${name}`);
  }
}

export async function runServe(warden: Warden, transport: Transport = stdioAgent()): Promise<number> {
  const server = new Server({ name: "warden", version: pkg.version }, { capabilities: { tools: {} }, instructions: "Ask warden before acting: protect an action, execute an ALLOWED receipt, wait for an approval with approval_status." });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: SERVE_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request) => callServeTool(warden, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>));
  const closed = new Promise<number>((resolve) => {
    server.onclose = () => resolve(0);
  });
  await server.connect(transport);
  return closed;
}
