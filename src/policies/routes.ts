// /customer/policy: the tenant's active policy, its immutable versions, its test suite, and what a
// draft would decide (docs/api.md, Policy). Writes need feature custom_policy; reads, tests and
// impact work on every plan.
import { Elysia, t } from "elysia";
import type { Sessions } from "../accounts/sessions.ts";
import type { AuditTrail } from "../audit/trail.ts";
import type { Db, Queryable } from "../db/index.ts";
import type { Logger } from "../log.ts";
import { sessionGuard } from "../http/guards.ts";
import { AppError, ErrorResponse } from "../http/errors.ts";
import { withIdempotency } from "../http/idempotency.ts";
import { requireFeature } from "../features/gate.ts";
import { decodeCursor, encodeCursor } from "../receipts/cursor.ts";
import { ListQuery } from "../receipts/model.ts";
import { impactOf, type StoredDecision } from "./impact.ts";
import { documentProblem, type PolicyDocument } from "../decide/policy.ts";
import { unknownToStore } from "../decide/entities.ts";
import { storeCatalogue } from "../entities/store.ts";
import {
  ImpactBody,
  ImpactReport,
  PolicyResponse,
  PutPolicyBody,
  TestBody,
  TestReport,
  TestsBody,
  TestsResponse,
  VersionList,
  VersionParams,
  VersionResponse,
} from "./model.ts";
import { activePolicy, listVersions, policyVersion, publishPolicy, storedTests, storeTests, type PolicyVersion } from "./store.ts";
import { byMember } from "../audit/events.ts";
import { runCases } from "./testing.ts";

/** What these routes use of the objects the root builds (docs/architecture.md, "The objects the root builds"). */
export interface PoliciesDeps {
  audit: AuditTrail;
  db: Db;
  log: Logger;
  sessions: Sessions;
}

const show = (p: PolicyVersion) => ({ ok: true as const, ...p.ref, document: p.document, published_by: p.published_by });
const security = [{ bearer: [] as string[] }];
// 503: the stored tests kept changing while a publish ran them (src/policies/store.ts).
const writeErrors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse };

/** A version named in a path; anything that is not one of the tenant's is 404, whatever its shape. */
function versionParam(text: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new AppError("not_found", "No policy version with this number.");
  return Number(text);
}

/** What the document's schema cannot say (approval terms on a rule that does not require approval): 400 with the JSON path. */
function consistent(document: PolicyDocument | undefined): void {
  const problem = documentProblem(document);
  if (problem) throw new AppError("invalid_request", `body/document/${problem.path}: ${problem.message}`);
}

/**
 * A document to publish against the tenant's entity store (docs/policy.md, "The entity schema"): an
 * entity type or attribute its schema declares that no stored entity has, unless optional, is 400
 * with the JSON path (`path` under which the document sits).
 */
async function knownToStore(db: Queryable, tenantId: string, document: PolicyDocument, path: string): Promise<void> {
  if (document.entities === undefined) return;
  const problem = unknownToStore(document, await storeCatalogue(db, tenantId));
  if (problem) throw new AppError("invalid_request", `${path}/${problem.path}: ${problem.message}`);
}

export function policiesRoutes(deps: PoliciesDeps) {
  const found = async (tenantId: string, version: number) => {
    const policy = await policyVersion(deps.db, tenantId, version);
    if (!policy) throw new AppError("not_found", "No policy version with this number.");
    return policy;
  };
  return (
    new Elysia({ name: "policies", prefix: "/customer/policy" })
      // Before body validation: a stranger learns nothing about the schema.
      .use(sessionGuard(deps.sessions))
      .guard({ session: true })
      .get("", async ({ customer }) => show(await activePolicy(deps.db, customer.tenant_id)), {
        response: { 200: PolicyResponse, 401: ErrorResponse },
        detail: { summary: "The active policy (built-in default pol_default v1 until a custom one is published)", tags: ["policy"], security },
      })
      .put(
        "",
        async ({ customer, body, request }) => {
          await requireFeature(deps.db, customer.tenant_id, "custom_policy");
          consistent(body.document);
          await knownToStore(deps.db, customer.tenant_id, body.document, "body/document");
          return show(await publishPolicy(deps.audit, deps.db, byMember(customer, request), body.document));
        },
        {
          body: PutPolicyBody,
          parse: "json",
          response: { 200: PolicyResponse, ...writeErrors },
          detail: { summary: "Publish a new immutable policy version once the stored tests pass under it (feature custom_policy)", tags: ["policy"], security },
        },
      )
      .get(
        "/versions",
        async ({ customer, query }) => {
          const limit = query.limit ?? 50;
          const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
          if (before === undefined) throw new AppError("invalid_request", "query/cursor: not a cursor this service gave out.");
          const rows = await listVersions(deps.db, customer.tenant_id, before, limit + 1);
          const versions = rows.slice(0, limit);
          const next_cursor = rows.length > limit ? encodeCursor(versions[versions.length - 1].version) : null;
          return { ok: true as const, versions, next_cursor };
        },
        {
          query: ListQuery,
          response: { 200: VersionList, 400: ErrorResponse, 401: ErrorResponse },
          detail: { summary: "The tenant's policy versions, newest first (cursor pagination); version 1 is the built-in default", tags: ["policy"], security },
        },
      )
      .get(
        "/versions/:version",
        async ({ customer, params }) => {
          const policy = await found(customer.tenant_id, versionParam(params.version));
          return { ...show(policy), created_at: policy.created_at };
        },
        {
          params: VersionParams,
          response: { 200: VersionResponse, 401: ErrorResponse, 404: ErrorResponse },
          detail: { summary: "One policy version of the tenant, with its document", tags: ["policy"], security },
        },
      )
      .post(
        "/versions/:version/restore",
        // A retry with the same Idempotency-Key gets the first answer, not one more version.
        ({ customer, params, request }) =>
          withIdempotency(deps, request, customer.tenant_id, null, async () => {
            const version = versionParam(params.version);
            await requireFeature(deps.db, customer.tenant_id, "custom_policy");
            const policy = await found(customer.tenant_id, version);
            await knownToStore(deps.db, customer.tenant_id, policy.document, `version ${version}: document`);
            return { status: 200, body: show(await publishPolicy(deps.audit, deps.db, byMember(customer, request), policy.document, version)) };
          }),
        {
          params: VersionParams,
          // 409 and 422 idempotency_mismatch also come from Idempotency-Key.
          response: { 200: PolicyResponse, ...writeErrors, 404: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse },
          detail: { summary: "Publish an earlier version's document again as a new version (stored tests run; feature custom_policy)", tags: ["policy"], security },
        },
      )
      .post(
        "/test",
        async ({ customer, body }) => {
          consistent(body.document);
          const document = body.document ?? (await activePolicy(deps.db, customer.tenant_id)).document;
          return { ok: true as const, ...runCases(document, body.cases) };
        },
        {
          body: TestBody,
          parse: "json",
          response: { 200: TestReport, 400: ErrorResponse, 401: ErrorResponse },
          detail: { summary: "Run test cases against a draft document or the active version; nothing is stored", tags: ["policy"], security },
        },
      )
      .get("/tests", async ({ customer }) => ({ ok: true as const, cases: await storedTests(deps.db, customer.tenant_id) }), {
        response: { 200: TestsResponse, 401: ErrorResponse },
        detail: { summary: "The tenant's stored policy test suite, which every publish must pass", tags: ["policy"], security },
      })
      .put(
        "/tests",
        async ({ customer, body, request }) => {
          await requireFeature(deps.db, customer.tenant_id, "custom_policy");
          return { ok: true as const, cases: await storeTests(deps.audit, byMember(customer, request), body.cases) };
        },
        {
          body: TestsBody,
          parse: "json",
          response: { 200: TestsResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse },
          detail: { summary: "Replace the stored policy test suite (feature custom_policy)", tags: ["policy"], security },
        },
      )
      .post(
        "/impact",
        async ({ customer, body }) => {
          // Protect receipts always name their key (receipts_decision_matches_kind): only events have none.
          const rows = (await deps.db.query("policies/impact_receipts", [customer.tenant_id, body.limit ?? 1000])) as StoredDecision[];
          consistent(body.document);
          return { ok: true as const, ...impactOf(rows, body.document) };
        },
        {
          body: ImpactBody,
          parse: "json",
          response: { 200: ImpactReport, 400: ErrorResponse, 401: ErrorResponse },
          detail: { summary: "Decide the inputs of the latest stored protect receipts again under a draft; nothing is stored", tags: ["policy"], security },
        },
      )
  );
}
