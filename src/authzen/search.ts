// The AuthZEN Search APIs (docs/authzen.md, "Search"): which stored subjects or resources of a
// type, or which actions, the active policy ALLOWS for the rest of the request. Each candidate is
// mapped as an evaluation is (./mapping.ts) and decided purely by decide(), as a simulation decides:
// a search is a dry run, so it stores no receipt, counts toward no quota and adds to no usage
// counter (usage rules read the committed totals, as POST /v1/simulate reads them).
import { canonicalJson } from "../crypto/canonical.ts";
import { sha256HexSync } from "../crypto/sync.ts";
import type { Queryable } from "../db/index.ts";
import { decide, type UsageFacts } from "../decide/engine.ts";
import { usageNeeds, type UsageNeed } from "../decide/usage-needs.ts";
import { entityRefs, readsEntities, type EntityFacts, type EntityFinder, type EntityRecord, type EntityRef } from "../decide/entities.ts";
import type { PolicyDocument, ProtectInput } from "../decide/policy.ts";
import { listEntities } from "../entities/store.ts";
import { AppError } from "../http/errors.ts";
import type { KeyPrincipal } from "../keys/authenticate.ts";
import { actionAllowed, assertActionAllowed } from "../keys/rules.ts";
import type { PolicyVersions } from "../policies/store.ts";
import { toProtectInput } from "./mapping.ts";
import {
  SEARCH_DEFAULT_LIMIT,
  type ActionSearchRequest,
  type ActionSearchResponse,
  type EntitySearchResponse,
  type EvaluationRequest,
  type ResourceSearchRequest,
  type SubjectSearchRequest,
} from "./model.ts";

/** What a search needs of the service. */
export interface Searching {
  db: Queryable;
  policies: PolicyVersions;
  entities: EntityFinder;
  now: () => Date;
}

type Kind = "subject" | "resource" | "action";

/** Most stored entities read by one query while searching (each at most 16 KiB). */
const CHUNK = 500;
/** Most stored entities one page examines: past it the page ends early, with a next_token (docs/authzen.md). */
export const SEARCH_MAX_SCANNED = 5000;

// ---------------------------------------------------------------------------------------------
// Page tokens: the position after which the next page starts, bound to the request it continues
// (a hash of everything but the token), so a changed request is refused as the specification
// asks. A token only ever narrows the caller's own tenant's entities: no signature needed.

/** The request a token continues: every entity, the context and the limit; the searched id (ignored) left out. */
function requestHash(kind: Kind, body: Record<string, unknown>, limit: number): string {
  const { page: _page, ...rest } = body;
  const searched = kind === "action" ? undefined : (rest[kind] as Record<string, unknown>);
  const shape = searched ? { ...rest, [kind]: { ...searched, id: undefined } } : { ...rest, action: undefined };
  return sha256HexSync(canonicalJson(JSON.parse(JSON.stringify({ kind, limit, request: shape })))).slice(0, 32);
}

export function encodeSearchToken(kind: Kind, hash: string, position: string[]): string {
  return Buffer.from(JSON.stringify(["s1", kind, hash, ...position]), "utf8").toString("base64url");
}

/** The position a token stands for; refuses one that is not this search's (400 invalid_request). */
export function decodeSearchToken(token: string, kind: Kind, hash: string, size: number): string[] {
  const refuse = () => new AppError("invalid_request", "body/page/token: not a next_token of this search (a token continues the request that answered it, unchanged but for the token)");
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw refuse();
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(parts) || parts.length !== 3 + size || parts[0] !== "s1" || parts[1] !== kind || parts[2] !== hash) throw refuse();
  const position = parts.slice(3);
  if (!position.every((p): p is string => typeof p === "string" && p.length >= 1 && p.length <= 200)) throw refuse();
  return position;
}

// ---------------------------------------------------------------------------------------------

/** One candidate's input and the entity facts it is decided on. */
type Candidate<T> = { result: T; input: ProtectInput; entities?: EntityFacts };

/**
 * Which candidates the policy ALLOWS, in order: each decided purely, with the usage totals as
 * committed (one read for all of them) when some usage rule applies.
 */
async function allowed<T>(deps: Searching, principal: KeyPrincipal, doc: PolicyDocument, candidates: Candidate<T>[]): Promise<boolean[]> {
  const caller = { key_id: principal.key_id };
  const at = deps.now().toISOString();
  const needs: UsageNeed[][] = candidates.map((c) => usageNeeds(c.input, doc, caller, at, c.entities));
  const flat = needs.flat();
  let totals: number[] = [];
  if (flat.length > 0) {
    const rows = await deps.db.query("usage/peek", [flat.map((n) => ({ tenant_id: principal.tenant_id, counter: n.counter, scope: n.scope, window_start: n.window_start }))]);
    totals = flat.map((_, i) => Number(rows[i]?.total ?? 0));
  }
  let offset = 0;
  return candidates.map((c, i) => {
    const mine = needs[i]!;
    let facts: UsageFacts | undefined;
    if (mine.length > 0) facts = new Map(mine.map((n, j) => [n.rule, { window_start: n.window_start, before: totals[offset + j]! }]));
    offset += mine.length;
    return decide(c.input, doc, caller, facts, c.entities).decision === "ALLOWED";
  });
}

/** The answer's page: present when more results follow, or when the request sent a page. */
function answer<T>(results: T[], next: string | undefined, sentPage: boolean): { page?: { next_token: string; count: number }; results: T[] } {
  if (next === undefined && !sentPage) return { results };
  return { page: { next_token: next ?? "", count: results.length }, results };
}

/** The stored record of an entity as a decision sees it. */
function recordOf(row: { type: string; id: string; attributes: EntityRecord["attributes"]; parents: EntityRef[]; version: number }): EntityRecord {
  return { type: row.type, id: row.id, attributes: row.attributes, parents: row.parents, version: row.version };
}

// A probe id as long as any stored id (128): when the request maps with it, it maps with every
// stored entity, so a bad request is refused (400) before any entity is read.
export const PROBE_ID = "x".repeat(128);

/**
 * The input of one candidate: the probe's mapped input with the candidate's id where the mapping
 * puts the searched entity's id (./mapping.ts: context `subject.id`, or `resource` = type/id and
 * context `resource.id`). The same input toProtectInput() makes of the request with that id
 * (test/authzen/search-scan.test.ts), without mapping and checking the request again for each of
 * thousands of candidates.
 */
export function candidateInput(probe: ProtectInput, kind: "subject" | "resource", type: string, id: string): ProtectInput {
  const context = { ...probe.context, [`${kind}.id`]: id };
  return kind === "subject" ? { ...probe, context } : { ...probe, resource: `${type}/${id}`, context };
}

/**
 * Subject or resource search: the tenant's stored entities of the searched type, in (type, id)
 * order after the token's position, for which the decision is ALLOWED; at most `limit`, and at
 * most SEARCH_MAX_SCANNED examined per page.
 */
export async function searchEntities(
  deps: Searching,
  principal: KeyPrincipal,
  kind: "subject" | "resource",
  body: SubjectSearchRequest | ResourceSearchRequest,
): Promise<EntitySearchResponse> {
  const limit = body.page?.limit ?? SEARCH_DEFAULT_LIMIT;
  const hash = requestHash(kind, body as Record<string, unknown>, limit);
  const type = body[kind].type;
  let after: EntityRef | null = null;
  if (body.page?.token !== undefined) {
    const [t, id] = decodeSearchToken(body.page.token, kind, hash, 2);
    if (t !== type) throw new AppError("invalid_request", "body/page/token: not a next_token of this search");
    after = { type: t, id: id! };
  }
  const other = kind === "subject" ? "resource" : "subject";
  const evaluation = (id: string): EvaluationRequest => {
    const { page: _page, ...rest } = body;
    const searched = { ...body[kind], id };
    return { ...(rest as EvaluationRequest), [kind]: searched };
  };
  // A key limited to some actions searches only those, as it evaluates only those.
  assertActionAllowed(principal.rules, body.action.name);
  const probe = toProtectInput(evaluation(PROBE_ID));

  const policy = await deps.policies.forRef(principal.tenant_id, principal.policy);
  const doc = policy.document;
  const reads = readsEntities(doc);
  // The other side's stored entity, read once (only under a policy that reads attributes).
  let fixed: EntityRecord | null | undefined;
  if (reads) {
    fixed = (await deps.entities.find(principal.tenant_id, { [other]: entityRefs(probe)[other] }, principal.context_epoch))[other];
  }

  const results: { type: string; id: string }[] = [];
  let scanned = 0;
  let next: EntityRef | undefined;
  // The first query reads a little more than a page; each next one twice as many (few allowed: few round trips).
  let chunk = Math.min(CHUNK, Math.max(limit + 1, 50));
  for (;;) {
    // Never past the page's bound: the last query of a page reads only what is left of it.
    const want = Math.min(chunk, SEARCH_MAX_SCANNED - scanned);
    const rows = await listEntities(deps.db, principal.tenant_id, type, after, want);
    const candidates = rows.map((row) => {
      const input = candidateInput(probe, kind, row.type, row.id);
      const entities: EntityFacts | undefined = reads ? { [kind]: recordOf(row), [other]: fixed } : undefined;
      return { result: { type: row.type, id: row.id }, input, entities };
    });
    const verdicts = await allowed(deps, principal, doc, candidates);
    let stop: number | undefined;
    for (const [i, c] of candidates.entries()) {
      if (verdicts[i]) results.push(c.result);
      if (results.length === limit) {
        stop = i;
        break;
      }
    }
    scanned += stop === undefined ? rows.length : stop + 1;
    const last = candidates[stop ?? candidates.length - 1]?.result;
    if (last) after = last;
    // More may follow: an allowed entity after the page's last in this chunk, or rows not read yet.
    const more = (stop !== undefined && verdicts.slice(stop + 1).some(Boolean)) || rows.length === want;
    if (!more) break;
    if (stop !== undefined || scanned >= SEARCH_MAX_SCANNED) {
      next = after!;
      break;
    }
    chunk = Math.min(CHUNK, chunk * 2);
  }
  const token = next ? encodeSearchToken(kind, hash, [next.type, next.id]) : undefined;
  return answer(results, token, body.page !== undefined);
}

/**
 * The actions a search may answer: every action the policy's rules name literally, in name order
 * (a prefix pattern such as `payments.*` names no action of its own), and that the key may ask
 * about.
 */
export function actionCandidates(doc: PolicyDocument, principal: Pick<KeyPrincipal, "rules">): string[] {
  const names = new Set<string>();
  for (const r of doc.rules) for (const a of r.when.actions ?? []) if (!a.endsWith("*")) names.add(a);
  return [...names].filter((a) => principal.rules === null || actionAllowed(principal.rules, a)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Action search: the policy's named actions, after the token's, for which the decision is ALLOWED. */
export async function searchActions(deps: Searching, principal: KeyPrincipal, body: ActionSearchRequest): Promise<ActionSearchResponse> {
  const limit = body.page?.limit ?? SEARCH_DEFAULT_LIMIT;
  const hash = requestHash("action", body as Record<string, unknown>, limit);
  const after = body.page?.token !== undefined ? decodeSearchToken(body.page.token, "action", hash, 1)[0] : undefined;
  const { page: _page, action: _ignored, ...rest } = body as ActionSearchRequest & { action?: unknown };
  const evaluation = (name: string): EvaluationRequest => ({ ...(rest as Omit<EvaluationRequest, "action">), action: { name } });
  // Refused (400) before anything is read when the rest of the request cannot be mapped.
  const probe = toProtectInput(evaluation("x"));

  const policy = await deps.policies.forRef(principal.tenant_id, principal.policy);
  const doc = policy.document;
  const names = actionCandidates(doc, principal).filter((a) => after === undefined || a > after);
  const entities: EntityFacts | undefined = readsEntities(doc) ? await deps.entities.find(principal.tenant_id, entityRefs(probe), principal.context_epoch) : undefined;
  const candidates = names.map((name) => ({ result: { name }, input: toProtectInput(evaluation(name)), entities }));
  const verdicts = await allowed(deps, principal, doc, candidates);
  const results: { name: string }[] = [];
  let next: string | undefined;
  for (const [i, c] of candidates.entries()) {
    if (!verdicts[i]) continue;
    if (results.length === limit) {
      next = results[results.length - 1]!.name;
      break;
    }
    results.push(c.result);
  }
  return answer(results, next ? encodeSearchToken("action", hash, [next]) : undefined, body.page !== undefined);
}
