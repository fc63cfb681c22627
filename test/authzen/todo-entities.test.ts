// The AuthZEN Todo interop rules as a constant-size policy over entities (docs/policy.md,
// "Entities and attributes"): "an editor may update a todo they own; an admin any todo", with each
// user's roles and email stored as attributes keyed by the subject's id. Decided over the working
// group's own decisions (test/authzen/interop/, see interop.test.ts) with the users as inline
// entities: the same lookup a store answers, so no user is named in the policy.
import { describe, expect, test } from "bun:test";
import { decide } from "../../src/decide/engine.ts";
import { inlineFacts } from "../../src/decide/entities.ts";
import { documentProblem, type ProtectInput } from "../../src/decide/policy.ts";
import { planEvaluations, toProtectInput } from "../../src/authzen/mapping.ts";
import type { EvaluationRequest, EvaluationsRequest } from "../../src/authzen/model.ts";
import TODO_01 from "./interop/todo-decisions-authorization-api-1_0-01.json";
import TODO_02 from "./interop/todo-decisions-authorization-api-1_0-02.json";
import { TODO_POLICY, TODO_USERS } from "./todo-entities.ts";

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
