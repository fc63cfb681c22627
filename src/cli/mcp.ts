// `warden mcp gateway|serve` (docs/mcp.md). stdout is the MCP channel: nothing else may be written
// there; the log goes to stderr as JSON lines.
import { writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { createLogger } from "../log.ts";
import { createWarden, type Warden } from "../mcp/warden.ts";
import { fetchOptions, serverUrl } from "./client.ts";
import { CliError } from "./inputs.ts";
import type { UsageLine } from "./usage.ts";

export class McpUsageError extends Error {}

export const MCP_LINES: UsageLine[] = [
  {
    synopsis: "mcp gateway [--name SERVER] [--wait] [--shadow] [--hide-denied] -- CMD ARGS...",
    summary:
      "an MCP server on stdio in front of the MCP server CMD runs: every tools/call is asked of warden first (action mcp.SERVER.TOOL, the arguments in context), forwarded only when ALLOWED; --wait awaits a pending approval; --shadow forwards everything and only logs; --hide-denied drops from tools/list the tools the policy denies whatever their arguments",
  },
  { synopsis: "mcp gateway --upstream URL [--name SERVER] [...]", summary: "the same in front of a Streamable HTTP MCP server" },
  { synopsis: "mcp serve", summary: "an MCP server on stdio with the tools simulate, protect, execute, verify and approval_status, for agents that ask on their own" },
];

function requireKey(): void {
  if (!process.env.WARDEN_API_KEY) throw new CliError("set WARDEN_API_KEY to an API key: the api_key that warden signup prints (or one from the console)", 2);
}

/** warden at WARDEN_URL with WARDEN_API_KEY, reached as the rest of the command line reaches it. */
function wardenFromEnv(env: Record<string, string | undefined> = process.env): Warden {
  return createWarden(serverUrl(), env.WARDEN_API_KEY ?? "", fetchOptions());
}

const stderrLog = () => createLogger((process.env.LOG_LEVEL as "info" | undefined) ?? "info", (line) => writeSync(2, line + "\n"));

export async function runMcp(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "serve") {
    parseArgs({ args: rest, options: {}, strict: true });
    requireKey();
    const { runServe } = await import("../mcp/serve.ts");
    return runServe(wardenFromEnv());
  }
  if (sub === "gateway") {
    const split = rest.indexOf("--");
    const own = split === -1 ? rest : rest.slice(0, split);
    const command = split === -1 ? [] : rest.slice(split + 1);
    const { values } = parseArgs({
      args: own,
      options: { name: { type: "string" }, wait: { type: "boolean" }, shadow: { type: "boolean" }, "hide-denied": { type: "boolean" }, upstream: { type: "string" } },
      strict: true,
    });
    if (values.upstream !== undefined && command.length > 0) throw new McpUsageError("mcp gateway takes either --upstream URL or -- CMD ARGS..., not both");
    if (values.upstream === undefined && command.length === 0) throw new McpUsageError("mcp gateway needs the upstream: -- CMD ARGS... (stdio) or --upstream URL (Streamable HTTP)");
    if (values.upstream !== undefined && !/^https?:\/\//.test(values.upstream)) throw new McpUsageError(`--upstream takes an http(s) URL, not ${values.upstream}`);
    if (values.name !== undefined && values.name.trim() === "") throw new McpUsageError("--name takes a non-empty SERVER name");
    requireKey();
    const { runGateway } = await import("../mcp/gateway.ts");
    return runGateway({
      name: values.name,
      wait: values.wait ?? false,
      shadow: values.shadow ?? false,
      hideDenied: values["hide-denied"] ?? false,
      command: command.length > 0 ? command : undefined,
      upstream: values.upstream,
      warden: wardenFromEnv(),
      log: stderrLog(),
    });
  }
  throw new McpUsageError(sub === undefined ? "mcp needs a command: gateway or serve" : `unknown mcp command: ${sub}`);
}
