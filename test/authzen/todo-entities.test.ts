// The AuthZEN Todo interop rules as a constant-size policy over entities (docs/policy.md,
// "Entities and attributes"): "an editor may update a todo they own; an admin any todo", with each
// user's roles and email stored as attributes keyed by the subject's id. Decided over the working
// group's own decisions (test/authzen/interop/, see interop.test.ts) with the users as inline
// entities: the same lookup a store answers, so no user is named in the policy.
import { describe, expect, test } from "bun:test";
import { decide } from "../../src/decide/engine.ts";
import { inlineFacts, type InlineEntity } from "../../src/decide/entities.ts";
import { documentProblem, type PolicyDocument, type ProtectInput } from "../../src/decide/policy.ts";
import { planEvaluations, toProtectInput } from "../../src/authzen/mapping.ts";
import type { EvaluationRequest, EvaluationsRequest } from "../../src/authzen/model.ts";
import TODO_01 from "./interop/todo-decisions-authorization-api-1_0-01.json";
import TODO_02 from "./interop/todo-decisions-authorization-api-1_0-02.json";

const TODO_ACTIONS = ["can_create_todo", "can_update_todo", "can_delete_todo"];

export const TODO_POLICY: PolicyDocument = {
  default_effect: "deny",
  default_reason: "no_rule_matched",
  entities: { subject: { types: ["user"], attributes: { roles: { type: "list" }, email: { type: "string" } } } },
  rules: [
    { id: "everyone_reads", effect: "allow", reason: "every user reads users and todos", when: { actions: ["can_read_user", "can_read_todos"] } },
    { id: "admins", effect: "allow", reason: "an admin changes any todo", when: { actions: TODO_ACTIONS, where: { "subject.attr.roles": { contains: "admin" } } } },
    { id: "editors_create", effect: "allow", reason: "an editor creates todos", when: { actions: ["can_create_todo"], where: { "subject.attr.roles": { contains: "editor" } } } },
    {
      id: "editors_own",
      effect: "allow",
      reason: "an editor changes their own todos",
      when: {
        actions: ["can_update_todo", "can_delete_todo"],
        where: { "subject.attr.roles": { contains: "editor" }, "context.resource.properties.ownerID": { eq: { ref: "subject.attr.email" } } },
      },
    },
  ],
};

// The Todo application's users (openid/authzen interop/authzen-todo-backend): Rick an admin, Morty and Summer editors, Beth and Jerry viewers.
const user = (n: number, email: string, roles: string[]): InlineEntity => ({
  type: "user",
  id: Buffer.from(`\n$fd${n}614d3-c39a-4781-b7bd-8b96f5a5100d\u0012\u0005local`).toString("base64"),
  attributes: { email, roles },
});
export const TODO_USERS: InlineEntity[] = [
  user(0, "rick@the-citadel.com", ["admin", "evil_genius"]),
  user(1, "morty@the-citadel.com", ["editor"]),
  user(2, "summer@the-smiths.com", ["editor"]),
  user(3, "beth@the-smiths.com", ["viewer"]),
  user(4, "jerry@the-smiths.com", ["viewer"]),
];

const decideTodo = (input: ProtectInput) => decide(input, TODO_POLICY, undefined, undefined, inlineFacts(input, TODO_USERS)).decision === "ALLOWED";

describe("the Todo rules over entities", () => {
  test("the policy is valid and its size does not grow with the users", () => {
    expect(documentProblem(TODO_POLICY)).toBeUndefined();
    expect(JSON.stringify(TODO_POLICY)).not.toContain("CiRmZD");
    expect(JSON.stringify(TODO_POLICY)).not.toContain("@");
  });

  test("the users' ids are the ones the runners send", () => {
    const sent = new Set(TODO_02.evaluation.map((e) => e.request.subject.id));
    expect(new Set(TODO_USERS.map((u) => u.id))).toEqual(sent);
  });

  for (const [name, scenario] of [["01", TODO_01], ["02", TODO_02]] as const) {
    test(`draft ${name}: every evaluation decided as expected`, () => {
      const wrong = scenario.evaluation.filter(({ request, expected }) => decideTodo(toProtectInput(request as EvaluationRequest)) !== expected);
      expect(wrong).toEqual([]);
      expect(scenario.evaluation.length).toBe(40);
    });
  }

  test("draft 02: every batch of evaluations decided as expected", () => {
    const batches = (TODO_02 as { evaluations?: { request: unknown; expected: { decision: boolean }[] }[] }).evaluations ?? [];
    expect(batches.length).toBeGreaterThan(0);
    for (const { request, expected } of batches) {
      const plan = planEvaluations(request as EvaluationsRequest);
      if (plan.kind !== "batch") throw new Error("expected a batch");
      const got = plan.items.map((item) => ({ decision: "input" in item ? decideTodo(item.input) : false }));
      expect(got).toEqual(expected);
    }
  });

  test("a viewer changes nothing, an unknown user nothing, an editor not another's todo", () => {
    const at = (subject: string, action: string, owner: string) =>
      decideTodo(toProtectInput({ subject: { type: "user", id: subject }, action: { name: action }, resource: { type: "todo", id: "t1", properties: { ownerID: owner } } }));
    const [rick, morty, , beth] = TODO_USERS.map((u) => u.id);
    expect(at(beth!, "can_update_todo", "beth@the-smiths.com")).toBe(false);
    expect(at("someone-else", "can_create_todo", "x")).toBe(false);
    expect(at(morty!, "can_delete_todo", "summer@the-smiths.com")).toBe(false);
    expect(at(morty!, "can_delete_todo", "morty@the-citadel.com")).toBe(true);
    expect(at(rick!, "can_delete_todo", "summer@the-smiths.com")).toBe(true);
  });
});
