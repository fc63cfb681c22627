// The pure mapping of AuthZEN requests to protect inputs (src/authzen/mapping.ts, docs/authzen.md).
import { describe, expect, test } from "bun:test";
import { planEvaluations, toProtectInput } from "../../src/authzen/mapping.ts";
import type { EvaluationRequest } from "../../src/authzen/model.ts";
import { AppError } from "../../src/http/errors.ts";

const alice = { type: "user", id: "alice@example.com" };
const read = { name: "can_read" };
const doc = { type: "document", id: "boxcarring.md" };

/** The message of the invalid_request that `fn` throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("invalid_request");
    return (err as AppError).message;
  }
  throw new Error("no refusal");
}

describe("toProtectInput", () => {
  test("the specification's request example: action, type/id resource, every scalar in context under its path", () => {
    const input = toProtectInput({
      subject: { type: "user", id: "alice@example.com" },
      resource: { type: "account", id: "123" },
      action: { name: "can_read", properties: { method: "GET" } },
      context: { time: "1985-10-26T01:22-07:00" },
    });
    expect(input).toEqual({
      action: "can_read",
      resource: "account/123",
      context: {
        "subject.type": "user",
        "subject.id": "alice@example.com",
        "resource.type": "account",
        "resource.id": "123",
        "action.properties.method": "GET",
        time: "1985-10-26T01:22-07:00",
      },
    });
  });

  test("amount and currency of the action's properties become the input's fields, not context", () => {
    const input = toProtectInput({ subject: alice, resource: { type: "vendor", id: "acme" }, action: { name: "payment.send", properties: { amount: 250, currency: "USD", memo: "rent" } } });
    expect(input.amount).toBe(250);
    expect(input.currency).toBe("USD");
    expect(input.context).toEqual({ "subject.type": "user", "subject.id": "alice@example.com", "resource.type": "vendor", "resource.id": "acme", "action.properties.memo": "rent" });
  });

  test("nested properties flatten by name and index; nulls are left out", () => {
    const input = toProtectInput({
      subject: { ...alice, properties: { department: "Sales", groups: ["admins", "ops"], manager: null } },
      resource: { type: "book", id: "123", properties: { library_record: { title: "AuthZEN in Action", isbn: "978-0593383322" } } },
      action: { name: "extend-loan", properties: { period: "2W", amount: null } },
      context: { geo: { lat: 52.37, ok: true } },
    });
    expect(input.amount).toBeUndefined();
    expect(input.context).toEqual({
      "subject.type": "user",
      "subject.id": "alice@example.com",
      "subject.properties.department": "Sales",
      "subject.properties.groups.0": "admins",
      "subject.properties.groups.1": "ops",
      "resource.type": "book",
      "resource.id": "123",
      "resource.properties.library_record.title": "AuthZEN in Action",
      "resource.properties.library_record.isbn": "978-0593383322",
      "action.properties.period": "2W",
      "geo.lat": 52.37,
      "geo.ok": true,
    });
  });

  const base: EvaluationRequest = { subject: alice, action: read, resource: doc };
  test.each([
    ["an action warden cannot name", { ...base, action: { name: "GET /todos" } }, "body/action/name: "],
    ["an empty action", { ...base, action: { name: "" } }, "body/action/name: "],
    ["a negative amount", { ...base, action: { name: "pay", properties: { amount: -1 } } }, "body/action/properties/amount: "],
    ["an amount as a string", { ...base, action: { name: "pay", properties: { amount: "10" } } }, "body/action/properties/amount: "],
    ["a lower-case currency", { ...base, action: { name: "pay", properties: { currency: "usd" } } }, "body/action/properties/currency: "],
    ["a property name with a space", { ...base, subject: { ...alice, properties: { "ip address": "10.0.0.1" } } }, "body/subject/properties/ip address: "],
    ["a context name with @", { ...base, context: { "@type": "x" } }, "body/context/@type: "],
    ["a string over 500 characters", { ...base, context: { note: "x".repeat(501) } }, "body/context/note: at most 500"],
    ["a NUL in a string", { ...base, subject: { type: "user", id: "a\u0000b" } }, "body/subject/id: contains U+0000"],
    ["a context name that collides with the subject's", { ...base, context: { "subject.id": "mallory" } }, "already taken"],
    ["a name over 64 characters", { ...base, context: { ["n".repeat(65)]: 1 } }, "over 64 characters"],
    ["more than 32 context entries", { ...base, context: Object.fromEntries(Array.from({ length: 29 }, (_, i) => [`c${i}`, i])) }, "more than 32 context entries"],
    ["a resource over 500 characters", { ...base, resource: { type: "document", id: "x".repeat(500) } }, "body/resource: "],
  ] as [string, EvaluationRequest, string][])("refused, naming the path: %s", (_, request, expected) => {
    expect(refusal(() => toProtectInput(request))).toContain(expected);
  });

  test("28 context entries of the caller's own fit beside the four of subject and resource", () => {
    const context = Object.fromEntries(Array.from({ length: 28 }, (_, i) => [`c${i}`, i]));
    expect(Object.keys(toProtectInput({ ...base, context }).context!)).toHaveLength(32);
  });

  test("a batch path prefixes the message", () => {
    expect(refusal(() => toProtectInput({ ...base, action: { name: "a b" } }, "/evaluations/2"))).toStartWith("body/evaluations/2/action/name: ");
  });
});

describe("planEvaluations", () => {
  const inputOf = (e: EvaluationRequest, path = "") => ({ input: toProtectInput(e, path) });

  test("no evaluations, or an empty array: a single evaluation of the top level, refused whole when it lacks an entity", () => {
    expect(planEvaluations({ subject: alice, action: read, resource: doc })).toEqual({ kind: "single", input: toProtectInput({ subject: alice, action: read, resource: doc }) });
    expect(planEvaluations({ subject: alice, action: read, resource: doc, context: { a: 1 }, evaluations: [] })).toEqual({ kind: "single", input: toProtectInput({ subject: alice, action: read, resource: doc, context: { a: 1 } }) });
    expect(refusal(() => planEvaluations({ subject: alice, action: read, evaluations: [] }))).toBe("body: resource is required (in the evaluation or at the top level)");
  });

  test("the specification's defaults example: top-level subject, context and action, the third evaluation's action overriding", () => {
    const time = { time: "2024-05-31T15:22-07:00" };
    const plan = planEvaluations({
      subject: alice,
      context: time,
      action: read,
      evaluations: [{ resource: { type: "document", id: "boxcarring.md" } }, { resource: { type: "document", id: "subject-search.md" } }, { action: { name: "can_edit" }, resource: { type: "document", id: "resource-search.md" } }],
    });
    expect(plan).toEqual({
      kind: "batch",
      semantic: "execute_all",
      itemContext: false,
      items: [
        inputOf({ subject: alice, action: read, resource: { type: "document", id: "boxcarring.md" }, context: time }),
        inputOf({ subject: alice, action: read, resource: { type: "document", id: "subject-search.md" }, context: time }),
        inputOf({ subject: alice, action: { name: "can_edit" }, resource: { type: "document", id: "resource-search.md" }, context: time }),
      ],
    });
  });

  test("an evaluation's context replaces the top-level one whole", () => {
    const plan = planEvaluations({ subject: alice, action: read, resource: doc, context: { a: 1, b: 2 }, evaluations: [{ context: { b: 3 } }, {}] });
    expect(plan.kind === "batch" && plan.items).toEqual([inputOf({ subject: alice, action: read, resource: doc, context: { b: 3 } }), inputOf({ subject: alice, action: read, resource: doc, context: { a: 1, b: 2 } })]);
  });

  test("the semantic and item_context come from options", () => {
    const plan = planEvaluations({ subject: alice, action: read, evaluations: [{ resource: doc }], options: { evaluations_semantic: "permit_on_first_permit", item_context: true } });
    expect(plan.kind === "batch" && [plan.semantic, plan.itemContext]).toEqual(["permit_on_first_permit", true]);
  });

  test("an item that lacks an entity with no default, or cannot be mapped, is that item's refusal with its index; the others are planned", () => {
    const refusals = (plan: ReturnType<typeof planEvaluations>) => (plan.kind === "batch" ? plan.items.map((item) => ("refused" in item ? [item.refused.code, item.refused.message] : "input")) : []);
    // The specification's own options example has no action anywhere.
    expect(refusals(planEvaluations({ evaluations: [{ resource: { type: "doc", id: "1" }, subject: { type: "doc", id: "2" } }], options: { evaluations_semantic: "execute_all" } }))).toEqual([
      ["invalid_request", "body/evaluations/0: action is required (in the evaluation or at the top level)"],
    ]);
    // The certification scenario's batch whose second item has no resource.
    expect(refusals(planEvaluations({ subject: alice, action: read, options: { evaluations_semantic: "execute_all" }, evaluations: [{ resource: doc }, {}] }))).toEqual([
      "input",
      ["invalid_request", "body/evaluations/1: resource is required (in the evaluation or at the top level)"],
    ]);
    expect(refusals(planEvaluations({ subject: alice, action: read, resource: doc, evaluations: [{}, { context: { "bad name": 1 } }] }))).toEqual([
      "input",
      ["invalid_request", expect.stringMatching(/^body\/evaluations\/1\/context\/bad name: /)],
    ]);
  });
});
