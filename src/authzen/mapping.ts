// AuthZEN requests to protect inputs (docs/authzen.md): pure, no I/O. A request that cannot be
// mapped faithfully is refused with the JSON path that stops it, never cut down silently.
import { Value } from "@sinclair/typebox/value";
import { AppError } from "../http/errors.ts";
import { ProtectInput } from "../decide/policy.ts";
import type { EvaluationRequest, EvaluationsRequest, Semantic } from "./model.ts";

// The limits of the protect input (../decide/policy.ts, docs/policy.md).
const ACTION = /^[A-Za-z0-9_.:/-]{1,200}$/;
const CURRENCY = /^[A-Z]{3}$/;
const NAME = /^[A-Za-z0-9_.-]+$/;
const MAX_KEY = 64;
const MAX_ENTRIES = 32;
const MAX_STRING = 500;
const MAX_RESOURCE = 500;
const MAX_AMOUNT = 1e15;

const refuse = (path: string, message: string) => new AppError("invalid_request", `body${path}: ${message}`);

type Scalar = string | number | boolean;

/** Flattens `value` into `out` under `key`: objects and arrays by `.name` and `.index`, nulls left out. */
function flatten(value: unknown, key: string, path: string, out: Map<string, Scalar>): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => flatten(item, `${key}.${i}`, `${path}/${i}`, out));
    return;
  }
  if (typeof value === "object") {
    for (const [name, inner] of Object.entries(value)) {
      if (!NAME.test(name)) throw refuse(`${path}/${name}`, "a name warden's context cannot hold: letters, digits, _, . and - only");
      flatten(inner, key === "" ? name : `${key}.${name}`, `${path}/${name}`, out);
    }
    return;
  }
  if (typeof value === "string" && value.length > MAX_STRING) throw refuse(path, `at most ${MAX_STRING} characters`);
  // The database cannot store U+0000; refused here, before any evaluation of a batch is stored.
  if (typeof value === "string" && value.includes("\u0000")) throw refuse(path, "contains U+0000 (NUL), which is not accepted");
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") throw refuse(path, "not a JSON value");
  if (key.length > MAX_KEY) throw refuse(path, `its context name ${JSON.stringify(key.slice(0, 20) + "...")} is over ${MAX_KEY} characters`);
  if (out.has(key)) throw refuse(path, `its context name ${JSON.stringify(key)} is already taken by another field of the request`);
  if (out.size >= MAX_ENTRIES) throw refuse(path, `the request maps to more than ${MAX_ENTRIES} context entries`);
  out.set(key, value);
}

/**
 * One evaluation as a protect input: `action.name` is the action, `resource` is `type/id`,
 * `action.properties.amount` and `.currency` are the amount and currency, and every other scalar
 * goes into the context under its path (`subject.id`, `subject.properties.department`,
 * `resource.type`, `action.properties.method`) or, for the request's own context, its name (`time`).
 */
export function toProtectInput(request: EvaluationRequest, path = ""): ProtectInput {
  const { subject, action, resource, context } = request;
  if (!ACTION.test(action.name)) throw refuse(`${path}/action/name`, "1 to 200 letters, digits and _ . : / - (a warden action)");
  const resourceName = `${resource.type}/${resource.id}`;
  if (resourceName.length > MAX_RESOURCE) throw refuse(`${path}/resource`, `type/id is over ${MAX_RESOURCE} characters`);

  const { amount, currency, ...actionRest } = action.properties ?? {};
  const input: ProtectInput = { action: action.name, resource: resourceName };
  if (amount !== undefined && amount !== null) {
    if (typeof amount !== "number" || amount < 0 || amount > MAX_AMOUNT) throw refuse(`${path}/action/properties/amount`, `a number from 0 to ${MAX_AMOUNT}`);
    input.amount = amount;
  }
  if (currency !== undefined && currency !== null) {
    if (typeof currency !== "string" || !CURRENCY.test(currency)) throw refuse(`${path}/action/properties/currency`, "three capital letters (ISO 4217)");
    input.currency = currency;
  }

  const out = new Map<string, Scalar>();
  flatten({ type: subject.type, id: subject.id, properties: subject.properties }, "subject", `${path}/subject`, out);
  flatten({ type: resource.type, id: resource.id, properties: resource.properties }, "resource", `${path}/resource`, out);
  flatten({ properties: actionRest }, "action", `${path}/action`, out);
  flatten(context, "", `${path}/context`, out);
  input.context = Object.fromEntries(out);

  // Every check above mirrors ProtectInput; this one keeps them from drifting apart.
  if (!Value.Check(ProtectInput, input)) throw refuse(path, "cannot be mapped to a protect input");
  return input;
}

/** One evaluation of a batch: its protect input, or the refusal that makes it a closed decision. */
export type Item = { input: ProtectInput } | { refused: AppError };

/** What a request asks for: one evaluation's input, or a batch's items and how to run and answer them. */
export type Plan = { kind: "single"; input: ProtectInput } | { kind: "batch"; items: Item[]; semantic: Semantic; itemContext: boolean };

/**
 * Resolves an evaluations request. Without evaluations (or with an empty array) it is a single
 * evaluation, refused whole (400) when it lacks an entity or cannot be mapped. Otherwise each item
 * takes any entity it leaves out from the top level (a whole entity, never merged field by field);
 * an item that still lacks one, or cannot be mapped, is that item's refusal, answered as a closed
 * decision while the others are decided, as the AuthZEN certification scenario asks.
 */
export function planEvaluations(body: EvaluationsRequest): Plan {
  const { evaluations, options, ...defaults } = body;
  if (!evaluations || evaluations.length === 0) return { kind: "single", input: toProtectInput(complete(defaults, ""), "") };
  return {
    kind: "batch",
    semantic: options?.evaluations_semantic ?? "execute_all",
    itemContext: options?.item_context === true,
    items: evaluations.map((item, i) => {
      const path = `/evaluations/${i}`;
      try {
        return { input: toProtectInput(complete({ ...defaults, ...withoutUndefined(item) }, path), path) };
      } catch (err) {
        if (err instanceof AppError) return { refused: err };
        throw err;
      }
    }),
  };
}

/** The evaluation with every entity it needs, or the refusal naming the first it lacks. */
function complete(e: Partial<EvaluationRequest>, path: string): EvaluationRequest {
  for (const entity of ["subject", "action", "resource"] as const) {
    if (e[entity] === undefined) throw refuse(path, `${entity} is required (in the evaluation or at the top level)`);
  }
  const { subject, action, resource, context } = e as EvaluationRequest;
  return context === undefined ? { subject, action, resource } : { subject, action, resource, context };
}

const withoutUndefined = <T extends object>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
