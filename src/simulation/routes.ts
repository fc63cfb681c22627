// /v1/simulate (alias /api/simulate) and /v1/presets.
import { Elysia } from "elysia";
import { AppError, ErrorResponse } from "../http/errors.ts";
import type { Deps } from "../app/deps.ts";
import { requestId } from "../http/request-state.ts";
import { PresetList, SimulateBody, SimulationResult } from "./model.ts";
import { activePolicy } from "../policies/store.ts";
import { assertVerdict, requireFeature } from "../plans/features.ts";
import { PRESETS, presetNames } from "./presets.ts";
import { simulatePreset, type ActivePolicy } from "./simulate.ts";

export function simulationRoutes(deps: Deps) {
  const simulate = async ({ body, request }: { body: { preset: string }; request: Request }) => {
    // Either credential; an API key wins when both are sent. A key brings its tenant's verdicts
    // and active policy version along; a session reads them. Either way the policy is the one
    // /v1/protect would decide under.
    let tenantId: string;
    let keyId: string | null = null;
    let policy: ActivePolicy;
    if (request.headers.has("x-api-key")) {
      const key = await deps.keys.require(request);
      assertVerdict("simulate", key.features.simulate);
      tenantId = key.tenant_id;
      keyId = key.key_id;
      policy = await deps.policies.forRef(tenantId, key.policy);
    } else if (request.headers.has("authorization")) {
      tenantId = (await deps.sessions.require(request)).tenant_id;
      await requireFeature(deps.db, tenantId, "simulate");
      policy = await activePolicy(deps.db, tenantId);
    } else throw new AppError("unauthorized", "Send X-API-Key: <key> or Authorization: Bearer <token>.");
    const result = await simulatePreset({
      preset: body.preset,
      policy,
      requestId: requestId(request),
      tenantId,
      keyId,
      timestamp: deps.now().toISOString(),
      signer: deps.signer,
      outcomes: deps.presetOutcomes,
    });
    deps.metrics.decision("simulate", result.decision);
    return result;
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
