// `warden mcp gateway` (docs/mcp.md): an MCP server on stdio towards the agent and an MCP client
// towards the upstream server, relaying messages as they are except for three: a `tools/call` is
// decided by warden before it may go upstream (./calls.ts), the upstream's answer to a forwarded
// call names its receipts, and with --hide-denied a `tools/list` answer loses the tools no
// arguments could get through (./hide-denied.ts). The parts:
//   Gateway    the relay: which message goes where, the upstream's name, the end of the session
//   Upstream   the transport towards the upstream and the gateway's own questions to it (./upstream.ts)
//   Calls      each tools/call from decision to answer (./calls.ts)
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log.ts";
import { Calls } from "./calls.ts";
import { serverPart } from "./context.ts";
import { hideDenied } from "./hide-denied.ts";
import { stdioAgent } from "./stdio.ts";
import { Upstream, type Id } from "./upstream.ts";
import type { Warden } from "./warden.ts";

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

export async function runGateway(opts: GatewayOptions): Promise<number> {
  return new Gateway(opts).run();
}

class Gateway {
  private readonly agent: Transport;
  private readonly upstream: Upstream;
  private readonly calls: Calls;
  private readonly log: Logger;
  /** The server part of actions: --name, else the upstream's name once it answered initialize. */
  private server: string | undefined;
  /** The agent's initialize requests in flight: their answer names the upstream. */
  private readonly initializing = new Set<Id>();
  /** The agent's tools/list requests in flight whose answers --hide-denied filters. */
  private readonly listing = new Set<Id>();

  constructor(private readonly opts: GatewayOptions) {
    this.log = opts.log;
    this.agent = opts.agent ?? stdioAgent();
    this.upstream = new Upstream({ url: opts.upstream, command: opts.command });
    this.server = opts.name !== undefined ? serverPart(opts.name) : undefined;
    this.calls = new Calls({
      warden: opts.warden,
      log: opts.log,
      wait: opts.wait,
      shadow: opts.shadow,
      upstream: this.upstream,
      server: () => this.server,
      toAgent: (message) => this.toAgent(message),
      toUpstream: (message) => this.toUpstream(message),
    });
  }

  /** Relays until either side closes; the exit code. */
  async run(): Promise<number> {
    const agent = this.agent;
    const upstream = this.upstream.transport;
    agent.onmessage = (message) => this.fromAgent(message);
    upstream.onmessage = (message) => this.fromUpstream(message);
    const closed = new Promise<number>((resolve) => {
      let done = false;
      const end = (code: number) => {
        if (done) return;
        done = true;
        void Promise.allSettled([agent.close(), upstream.close()]).then(() => resolve(code));
      };
      agent.onclose = () => end(0);
      upstream.onclose = () => {
        this.log.info("mcp_upstream_closed", {});
        end(0);
      };
      upstream.onerror = (err) => this.log.warn("mcp_upstream_error", { error: err.message });
      agent.onerror = (err) => this.log.warn("mcp_agent_error", { error: err.message });
    });

    await upstream.start();
    await agent.start();
    const { opts } = this;
    this.log.info("mcp_gateway_started", { upstream: opts.upstream ?? opts.command!.join(" "), warden: opts.warden.url, server: this.server, wait: opts.wait, shadow: opts.shadow, hide_denied: opts.hideDenied });
    return closed;
  }

  private toAgent(message: JSONRPCMessage): Promise<void> {
    return this.agent.send(message).catch((err: Error) => this.log.error("mcp_agent_send_failed", { error: err.message }));
  }

  private toUpstream(message: JSONRPCMessage): Promise<void> {
    return this.upstream.transport.send(message).catch((err: Error) => {
      this.log.error("mcp_upstream_send_failed", { error: err.message });
      // A request the upstream never got still deserves an answer.
      if (isJSONRPCRequest(message)) void this.toAgent({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: `upstream unreachable: ${err.message}` } });
    });
  }

  private fromAgent(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) {
      if (message.method === "initialize") this.initializing.add(message.id);
      if (message.method === "tools/list" && this.opts.hideDenied) this.listing.add(message.id);
      if (message.method === "tools/call") return this.calls.begin(message);
    }
    if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const requestId = (message.params as { requestId?: Id } | undefined)?.requestId;
      // Still being decided: nothing went upstream, and the agent wants no answer.
      if (requestId !== undefined && this.calls.cancel(requestId)) return;
    }
    void this.toUpstream(message);
  }

  private fromUpstream(message: JSONRPCMessage): void {
    if (this.upstream.takeAnswer(message)) return;
    if (isJSONRPCNotification(message) && message.method === "notifications/tools/list_changed") this.upstream.forgetTools();
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined) {
      const id = message.id;
      if (this.initializing.delete(id) && isJSONRPCResultResponse(message)) this.initialized(message.result as { serverInfo?: { name?: string }; protocolVersion?: string });
      if (this.listing.delete(id) && isJSONRPCResultResponse(message) && Array.isArray((message.result as { tools?: unknown }).tools)) {
        const result = message.result as { tools: unknown[] };
        void hideDenied(this.opts.warden, this.server, result.tools).then(
          (tools) => this.toAgent({ ...message, result: { ...result, tools } }),
          (err: Error) => {
            this.log.warn("mcp_hide_denied_failed", { error: err.message });
            return this.toAgent(message);
          },
        );
        return;
      }
      return void this.toAgent(this.calls.answered({ ...message, id }));
    }
    void this.toAgent(message);
  }

  /** The upstream answered initialize: its name (unless --name gave one) and the protocol version. */
  private initialized(result: { serverInfo?: { name?: string }; protocolVersion?: string }): void {
    if (this.server === undefined) this.server = serverPart(result.serverInfo?.name);
    if (typeof result.protocolVersion === "string") this.upstream.setProtocolVersion(result.protocolVersion);
    this.log.info("mcp_upstream_initialized", { server: this.server, upstream_name: result.serverInfo?.name });
  }
}
