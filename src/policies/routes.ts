// /customer/policy: the tenant's active policy, and publishing a new immutable version.
import { Elysia } from "elysia";
import { ErrorResponse } from "../http/errors.ts";
import type { Deps } from "../app/deps.ts";
import { requireFeature } from "../plans/features.ts";
import type { ActivePolicy } from "../simulation/simulate.ts";
import { PolicyResponse, PutPolicyBody } from "./model.ts";
import { activePolicy, publishPolicy } from "./store.ts";

const show = (p: ActivePolicy) => ({ ok: true as const, ...p.ref, document: p.document });
const security = [{ bearer: [] as string[] }];

export function policiesRoutes(deps: Deps) {
  return (
    new Elysia({ name: "policies", prefix: "/customer/policy" })
      // Before body validation: a stranger learns nothing about the schema.
      .derive(async ({ request }) => ({ customer: await deps.sessions.require(request) }))
      .get("", async ({ customer }) => show(await activePolicy(deps.db, customer.tenant_id)), {
        response: { 200: PolicyResponse, 401: ErrorResponse },
        detail: { summary: "The active policy (built-in default pol_default v1 until a custom one is published)", tags: ["policy"], security },
      })
      .put(
        "",
        async ({ customer, body }) => {
          await requireFeature(deps.db, customer.tenant_id, "custom_policy");
          return show(await publishPolicy(deps.db, customer.tenant_id, body.document));
        },
        {
          body: PutPolicyBody,
          parse: "json",
          response: { 200: PolicyResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse },
          detail: { summary: "Publish a new immutable policy version (feature custom_policy)", tags: ["policy"], security },
        },
      )
  );
}
