// /v1/simulate (alias /api/simulate) and /v1/presets.
import { Elysia } from "elysia";
import { ErrorResponse } from "../accounts/model.ts";
import { requireKeyOrCustomer } from "../http/auth.ts";
import type { Deps } from "../http/deps.ts";
import { requestId } from "../http/request-state.ts";
import { PresetList, SimulateBody, SimulationResult } from "./model.ts";
import { DEFAULT_POLICY, DEFAULT_POLICY_REF, policyHash } from "./policy.ts";
import { PRESETS, presetNames } from "./presets.ts";
import { simulatePreset, type ActivePolicy } from "./simulate.ts";

export function simulationRoutes(deps: Deps) {
  // Every tenant decides under the built-in default policy until custom policies exist.
  let defaultPolicy: Promise<ActivePolicy> | undefined;
  const activePolicy = () =>
    (defaultPolicy ??= policyHash(DEFAULT_POLICY).then((hash) => ({ ref: { ...DEFAULT_POLICY_REF, hash }, document: DEFAULT_POLICY })));

  const simulate = async ({ body, request }: { body: { preset: string }; request: Request }) => {
    const principal = await requireKeyOrCustomer(deps, request);
    return simulatePreset({
      preset: body.preset,
      policy: await activePolicy(),
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
