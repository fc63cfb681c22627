// --hide-denied (docs/mcp.md): a tools/list answer keeps a tool unless no arguments could let a
// call of it through. Warden answers that for the action (`action_allowable` of POST /v1/simulate:
// some rule could allow it or ask for approval), so a tool allowed only for some arguments (small
// payments) stays listed.
import { toolAction } from "./context.ts";
import type { Warden } from "./warden.ts";

const HIDE_CONCURRENCY = 4;

/** The tools of a tools/list answer that a call could get through, for actions of `server`. */
export async function hideDenied(warden: Warden, server: string | undefined, tools: unknown[]): Promise<unknown[]> {
  if (server === undefined) return tools;
  const keep: boolean[] = new Array(tools.length).fill(true);
  let next = 0;
  const worker = async () => {
    while (next < tools.length) {
      const i = next++;
      const named = toolAction(server, (tools[i] as { name?: unknown })?.name);
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
}
