// The gateway's side towards the upstream MCP server (docs/mcp.md): a command over stdio or a
// Streamable HTTP URL, the official SDK's client transports. Besides relaying, the gateway asks the
// upstream things of its own (its tools/list), whose answers stay here and never reach the agent.
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export type Id = string | number;

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

export class Upstream {
  readonly transport: Transport;
  private readonly http: StreamableHTTPClientTransport | undefined;
  /** The gateway's own requests, by id: their answers stay with the gateway. */
  private readonly asked = new Map<Id, (message: JSONRPCMessage | undefined) => void>();
  private readonly askPrefix = `warden-gateway-${crypto.randomUUID()}-`;
  private askCount = 0;
  /** The upstream's tool names (every page of its tools/list); undefined when it would not tell. Dropped on tools/list_changed. */
  private tools: Promise<Set<string> | undefined> | undefined;

  /** `url` for a Streamable HTTP server, else `command` and its arguments. */
  constructor(where: { url?: string; command?: string[] }) {
    if (where.url) {
      // No requestInit headers: nothing of the agent's or the gateway's credentials goes upstream.
      this.http = new StreamableHTTPClientTransport(new URL(where.url));
      this.transport = this.http;
    } else {
      const [command, ...args] = where.command!;
      this.transport = new StdioClientTransport({ command: command!, args, env: upstreamEnv(process.env), stderr: "inherit" });
    }
  }

  /** The version the upstream's initialize answer settled on, which HTTP requests then name. */
  setProtocolVersion(version: string): void {
    this.http?.setProtocolVersion(version);
  }

  /** Takes an answer to a request of the gateway's own; false for any other message, which is the agent's. */
  takeAnswer(message: JSONRPCMessage): boolean {
    if (!(isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) || message.id === undefined) return false;
    const answered = this.asked.get(message.id);
    if (!answered) return false;
    answered(message);
    return true;
  }

  /** notifications/tools/list_changed: the next question reads the list again. */
  forgetTools(): void {
    this.tools = undefined;
  }

  /**
   * The upstream's tool names when it lacks `tool`, else undefined: its tools/list, read again once
   * before saying so (a tool added since). An upstream that does not list its tools has every tool.
   */
  async unknownTool(tool: string): Promise<string[] | undefined> {
    this.tools ??= this.listTools();
    let names = await this.tools;
    if (names === undefined || names.has(tool)) return undefined;
    this.tools = this.listTools();
    names = await this.tools;
    return names === undefined || names.has(tool) ? undefined : [...names];
  }

  private async listTools(): Promise<Set<string> | undefined> {
    const names = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < TOOL_PAGES_MAX; page++) {
      const reply = await this.ask("tools/list", cursor === undefined ? {} : { cursor });
      if (!reply || !isJSONRPCResultResponse(reply)) return undefined;
      const result = reply.result as { tools?: unknown; nextCursor?: unknown };
      if (!Array.isArray(result.tools)) return undefined;
      for (const tool of result.tools) if (typeof (tool as { name?: unknown })?.name === "string") names.add((tool as { name: string }).name);
      if (typeof result.nextCursor !== "string" || result.nextCursor === "") return names;
      cursor = result.nextCursor;
    }
    return undefined;
  }

  /** A request of the gateway's own: its answer, or undefined when none came in time. */
  private ask(method: string, params: Record<string, unknown>): Promise<JSONRPCMessage | undefined> {
    return new Promise((resolve) => {
      const id = `${this.askPrefix}${++this.askCount}`;
      const timer = setTimeout(() => answered(undefined), UPSTREAM_ASK_MS);
      const answered = (message: JSONRPCMessage | undefined) => {
        clearTimeout(timer);
        this.asked.delete(id);
        resolve(message);
      };
      this.asked.set(id, answered);
      this.transport.send({ jsonrpc: "2.0", id, method, params }).catch(() => answered(undefined));
    });
  }
}
