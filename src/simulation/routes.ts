// /v1/simulate (alias /api/simulate) and /v1/presets.
import { Elysia } from "elysia";
import { ErrorResponse } from "../accounts/model.ts";
import { requireKeyOrCustomer } from "../http/auth.ts";
import type { Deps } from "../http/deps.ts";
import { requestId } from "../http/request-state.ts";
import { PresetList, SimulateBody, SimulationResult } from "./model.ts";
import { activePolicy, policyForRef } from "../policies/store.ts";
import { assertVerdict, requireFeature } from "../plans/features.ts";
import { PRESETS, presetNames } from "./presets.ts";
import { simulatePreset } from "./simulate.ts";

export function simulationRoutes(deps: Deps) {
  const simulate = async ({ body, request }: { body: { preset: string }; request: Request }) => {
    const principal = await requireKeyOrCustomer(deps, request);
    // A key brings its tenant's verdicts and active policy version along; a session reads them.
    if (principal.via === "key") assertVerdict("simulate", principal.features.simulate);
    else await requireFeature(deps.db, principal.tenant_id, "simulate");
    return simulatePreset({
      preset: body.preset,
      // The tenant's active policy, the same one /v1/protect would decide under.
      policy: principal.via === "key" ? await policyForRef(deps.db, principal.tenant_id, principal.policy) : await activePolicy(deps.db, principal.tenant_id),
      requestId: requestId(request),
      tenantId: principal.tenant_id,
      timestamp: deps.now().toISOString(),
      signer: deps.signer,
    });
  };
  const hook = (summary: string) => ({
    body: SimulateBody,
    // Documents the JSON body; the app's own parser (src/http/body.ts) runs first.
    parse: "json" as const,
    response: { 200: SimulationResult, 400: ErrorResponse, 401: ErrorResponse },
    detail: { summary, tags: ["simulation"], security: [{ apiKey: [] as string[] }, { bearer: [] as string[] }] as Record<string, string[]>[] },
  });

  const presets = presetNames().map((name) => ({ preset: name, description: PRESETS[name].description, input: PRESETS[name].input }));

  return new Elysia({ name: "simulation" })
    .post("/v1/simulate", simulate, hook("Dry-run a named preset against the active policy"))
    .post("/api/simulate", simulate, hook("Alias of /v1/simulate"))
    .get("/v1/presets", () => ({ ok: true as const, presets }), {
      response: { 200: PresetList },
      detail: { summary: "The named simulation scenarios", tags: ["simulation"] },
    });
}
