// /v1/simulate (alias /api/simulate) and /v1/presets.
import { Elysia } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import type { Db } from "../db/index.ts";
import type { KeyAuthenticator } from "../keys/authenticate.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { PolicyVersions } from "../policies/store.ts";
import type { ReceiptSigner } from "../receipts/signer.ts";
import type { PresetOutcomes } from "./simulate.ts";
import type { Static } from "@sinclair/typebox";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { keyOrSessionGuard, type KeyOrSession } from "../http/guards.ts";
import { requestId } from "../http/request-state.ts";
import { PresetList, SimulateBody, SimulationResult } from "./model.ts";
import { activePolicy, policyVersion } from "../policies/store.ts";
import { assertVerdict, requireFeature } from "../features/gate.ts";
import { documentProblem, policyHash, type SimulatedPolicy } from "../decide/policy.ts";
import { PRESETS, presetNames } from "./presets.ts";
import type { UsageFacts } from "../decide/engine.ts";
import { usageNeeds } from "../decide/usage-needs.ts";
import { entityRefs, inlineFacts, readsEntities, type EntityFacts, type EntityFinder } from "../decide/entities.ts";
import { assertActionAllowed } from "../keys/rules.ts";
import { simulate, type Subject } from "./simulate.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface SimulationDeps {
  db: Db;
  keys: KeyAuthenticator;
  metrics: Metrics;
  now: () => Date;
  policies: PolicyVersions;
  presetOutcomes: PresetOutcomes;
  sessions: Sessions;
  signer: ReceiptSigner;
  /** The entity store, for policies that read stored attributes (none: their subject and resource are not stored). */
  entities?: EntityFinder;
}

type Body = Static<typeof SimulateBody>;
type Caller = KeyOrSession<Awaited<ReturnType<SimulationDeps["keys"]["require"]>>, Awaited<ReturnType<SimulationDeps["sessions"]["require"]>>>;

function subjectOf(body: Body): Subject {
  if ((body.preset === undefined) === (body.input === undefined)) throw new AppError("invalid_request", "body: send either preset or input.");
  return body.preset !== undefined ? { preset: body.preset } : { input: body.input! };
}

export function simulationRoutes(deps: SimulationDeps) {
  // The version asked for, of the caller's tenant; another tenant's or an unknown one is 404.
  const versionOf = async (tenantId: string, version: number) => {
    const policy = await policyVersion(deps.db, tenantId, version);
    if (!policy) throw new AppError("not_found", "No policy version with this number.");
    return { ref: policy.ref, document: policy.document };
  };

  const run = async ({ body, request, caller }: { body: Body; request: Request; caller: Caller }) => {
    const problem = documentProblem(body.document);
    if (problem) throw new AppError("invalid_request", `body/document/${problem.path}: ${problem.message}`);
    if (body.document !== undefined && body.policy_version !== undefined) {
      throw new AppError("invalid_request", "body: send either policy_version or document, not both.");
    }
    // Without policy_version or document, the policy is the one /v1/protect would decide under.
    let tenantId: string;
    let keyId: string | null = null;
    let policy: SimulatedPolicy;
    if (caller.key) {
      const key = caller.key;
      assertVerdict("simulate", key.features.simulate);
      tenantId = key.tenant_id;
      keyId = key.key_id;
      // A draft is the account owner's tool: a bot's key decides under published versions only.
      if (body.document !== undefined) throw new AppError("invalid_request", "body/document: a draft document needs a session (Authorization: Bearer), not an API key.");
      policy = body.policy_version !== undefined ? await versionOf(tenantId, body.policy_version) : await deps.policies.forRef(tenantId, key.policy);
    } else {
      tenantId = caller.session.tenant_id;
      await requireFeature(deps.db, tenantId, "simulate");
      if (body.document !== undefined) policy = { ref: { policy_id: "draft", version: null, hash: await policyHash(body.document) }, document: body.document };
      else if (body.policy_version !== undefined) policy = await versionOf(tenantId, body.policy_version);
      else policy = await activePolicy(deps.db, tenantId);
    }
    const subject = subjectOf(body);
    // A key limited to some actions simulates only those (docs/api.md, "Keys for agents"); an unknown preset keeps its own answer.
    if (caller.key && caller.key.rules !== null) {
      const action = "input" in subject ? subject.input.action : Object.hasOwn(PRESETS, subject.preset) ? PRESETS[subject.preset]!.input.action : undefined;
      if (action !== undefined) assertActionAllowed(caller.key.rules, action);
    }
    const timestamp = deps.now().toISOString();
    // Usage rules: the counters as committed, read without a lock; a simulation counts nothing.
    const input = "preset" in subject ? PRESETS[subject.preset]?.input : subject.input;
    // Entities given inline stand for the store (version 0): a dry run needs none stored. Otherwise
    // the store's, under a policy that reads attributes.
    let entities: EntityFacts | undefined;
    if (input && body.entities) entities = inlineFacts(input, body.entities);
    else if (input && deps.entities && readsEntities(policy.document)) entities = await deps.entities.find(tenantId, entityRefs(input), caller.key?.context_epoch);
    const needs = input ? usageNeeds(input, policy.document, { key_id: keyId }, timestamp, entities) : [];
    let usage: UsageFacts | undefined;
    if (needs.length > 0) {
      const rows = await deps.db.query("usage/peek", [needs.map((n) => ({ tenant_id: tenantId, counter: n.counter, scope: n.scope, window_start: n.window_start }))]);
      usage = new Map(needs.map((n, i) => [n.rule, { window_start: n.window_start, before: rows[i]?.total ?? 0 }]));
    }
    const result = await simulate({
      subject,
      policy,
      requestId: requestId(request),
      tenantId,
      keyId,
      timestamp,
      signer: deps.signer,
      outcomes: deps.presetOutcomes,
      usage,
      entities,
    });
    deps.metrics.decision("simulate", result.decision);
    return result;
  };
  const hook = (summary: string) => ({
    body: SimulateBody,
    // Documents the JSON body; the app's own parser (src/http/body.ts) runs first.
    parse: "json" as const,
    // 429: a key's own rate (docs/api.md, "Keys for agents").
    response: { 200: SimulationResult, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse },
    detail: { summary, tags: ["simulation"], security: [{ apiKey: [] as string[] }, { bearer: [] as string[] }] as Record<string, string[]>[] },
  });

  const presets = presetNames().map((name) => ({ preset: name, description: PRESETS[name].description, input: PRESETS[name].input }));

  const presetRoutes = new Elysia({ name: "simulation-presets" }).get("/v1/presets", () => ({ ok: true as const, presets }), {
    response: { 200: PresetList },
    detail: { summary: "The named simulation scenarios", tags: ["simulation"], security: [] },
  });
  // Its own instance: the guard covers the routes of its instance, and the presets take no caller.
  const simulateRoutes = new Elysia({ name: "simulation-simulate" })
    // The guard runs before Elysia validates the body: without a credential the answer is 401, never 400 (src/http/guards.ts).
    .use(keyOrSessionGuard(deps.keys, deps.sessions))
    .guard({ keyOrSession: true })
    .post("/v1/simulate", run, hook("Dry-run a preset or an input against the active policy, a stored version or (with a session) a draft"))
    .post("/api/simulate", run, hook("Alias of /v1/simulate"));

  return new Elysia({ name: "simulation" }).use(presetRoutes).use(simulateRoutes);
}
