// The agent's side of stdio for `warden mcp gateway` and `warden mcp serve` (docs/mcp.md,
// "Shutdown"): the SDK's StdioServerTransport, closed when stdin ends. A host ends a stdio server
// by closing its stdin first (MCP's stdio shutdown), and a host that crashed leaves it closed;
// the SDK's transport reads only `data`, so without this the command (and the gateway's upstream)
// outlived its host.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

export function stdioAgent(stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout): StdioServerTransport {
  const transport = new StdioServerTransport(stdin as typeof process.stdin, stdout as typeof process.stdout);
  const ended = () => void transport.close();
  stdin.once("end", ended);
  stdin.once("close", ended);
  return transport;
}
